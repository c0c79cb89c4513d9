/** Per-credential token buckets: `capacity` requests at once, refilled at `refillPerSecond`. */
export interface RateLimitOptions {
  readonly capacity: number
  readonly refillPerSecond: number
  /** Buckets kept at most; the least recently used is dropped first. Default 100000. */
  readonly maxTracked?: number
}

interface Bucket {
  tokens: number
  updatedAt: number
}

/**
 * Returns a check that takes one token from the caller's bucket and answers 0 when the request may go on, or the
 * whole seconds to wait (for Retry-After). A Map keeps insertion order, which makes it a cheap LRU.
 */
export const makeRateLimiter = (options: RateLimitOptions, now: () => number = () => performance.now()) => {
  const buckets = new Map<string, Bucket>()
  const maxTracked = options.maxTracked ?? 100_000
  return (key: string): number => {
    const at = now()
    let bucket = buckets.get(key)
    if (bucket === undefined) {
      bucket = { tokens: options.capacity, updatedAt: at }
      if (buckets.size >= maxTracked) {
        const oldest = buckets.keys().next()
        if (oldest.done !== true) buckets.delete(oldest.value)
      }
    } else {
      buckets.delete(key)
      bucket.tokens = Math.min(
        options.capacity,
        bucket.tokens + ((at - bucket.updatedAt) / 1000) * options.refillPerSecond
      )
      bucket.updatedAt = at
    }
    buckets.set(key, bucket)
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1
      return 0
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / options.refillPerSecond))
  }
}
