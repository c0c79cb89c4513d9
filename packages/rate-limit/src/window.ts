/** A per-credential rate limit as the CLI states it: a burst, then a sustained rate. */
export interface RateLimitOptions {
  /** Requests one credential may send at once: an integer, at least 1. */
  readonly capacity: number
  /** Requests per second regained: above 0. */
  readonly refillPerSecond: number
}

/** What rate-limiter-flexible is given: `points` requests per key in each window of `durationSeconds`. */
export interface FixedWindow {
  readonly points: number
  readonly durationSeconds: number
}

/**
 * The bucket {capacity C, refill R/s} as a fixed window: C requests per window of C/R seconds, rounded up to a whole
 * second (Redis keeps expiries in whole seconds, and a window under one second would never expire there). A key's
 * window starts at its first request and the next at its first request after that one ended, so windows start at
 * least C/R seconds apart: over any T seconds from a key's first request at most C + C * T / (C/R) = C + R * T
 * requests are allowed, the bound the bucket had. Unlike the bucket, a spent window comes back whole at its end, not
 * a request every 1/R seconds.
 */
export const fixedWindowFor = ({ capacity, refillPerSecond }: RateLimitOptions): FixedWindow => {
  if (!Number.isInteger(capacity) || capacity < 1) {
    throw new RangeError(`capacity must be an integer of at least 1, got ${capacity}`)
  }
  if (!Number.isFinite(refillPerSecond) || refillPerSecond <= 0) {
    throw new RangeError(`refillPerSecond must be a finite number above 0, got ${refillPerSecond}`)
  }
  // The small allowance keeps a ratio such as 3 / 0.3 (10.000000000000002 in floating point) at 10.
  return { points: capacity, durationSeconds: Math.max(1, Math.ceil(capacity / refillPerSecond - 1e-9)) }
}

/** Retry-After for a refusal: whole seconds until the window ends, at least 1 (a store may answer -1 or 0). */
export const retryAfterSeconds = (msBeforeNext: number): number => Math.max(1, Math.ceil(msBeforeNext / 1000))
