import type { RateLimiter } from "@accord/core"
import { RateLimiterRes } from "rate-limiter-flexible"
import { retryAfterSeconds } from "./window.js"

/** A limiter this package built: the core's `RateLimiter`, plus `close()` for what it holds (a pool, a client). */
export interface ClosableRateLimiter extends RateLimiter {
  /** Releases the store's connections; harmless to call twice. The limiter must not be used afterwards. */
  readonly close: () => Promise<void>
}

export const DEFAULT_TIMEOUT_MS = 500
export const DEFAULT_PAUSE_AFTER_ERROR_MS = 1000
export const DEFAULT_KEY_PREFIX = "accord:rate-limit"

/** Options of the limiters whose allowance lives outside the process: a cluster's primary, PostgreSQL, Redis. */
export interface SharedLimiterOptions {
  /**
   * Told when the store fails or does not answer in time. The request is served all the same (fail open); a host
   * logs it, preferably at most once in a while. It must not throw (what it throws is dropped).
   */
  readonly onError?: (error: unknown) => void
  /** The longest a request waits for the store, default 500 ms; then it is served and `onError` told. */
  readonly timeoutMs?: number
  /**
   * After a failure the store is left alone this long, default 1000 ms: requests are served at once rather than each
   * waiting for a store that is down. 0 asks it every time.
   */
  readonly pauseAfterErrorMs?: number
  /** Prefix of the keys (Redis keys, PostgreSQL rows, the cluster primary's limiter), default `accord:rate-limit`. */
  readonly keyPrefix?: string
}

/** The store did not answer within `timeoutMs`: what `onError` gets for a hung store. */
export class RateLimitStoreTimeout extends Error {
  override readonly name = "RateLimitStoreTimeout"
  constructor(readonly timeoutMs: number) {
    super(`the rate limit store did not answer within ${timeoutMs} ms`)
  }
}

const ALLOWED: Promise<number> = Promise.resolve(0)

/** `onError`, called so that whatever it throws is dropped: the host's reporter failing must not fail a request. */
export const reporter =
  (onError: SharedLimiterOptions["onError"]) =>
  (error: unknown): void => {
    try {
      onError?.(error)
    } catch {
      // Dropped: see above.
    }
  }

/**
 * A rate-limiter-flexible `consume` (resolves: allowed; rejects with a RateLimiterRes: refused; rejects with anything
 * else: the store failed) as the core's never-rejecting `consume`, bounded in time and failing open.
 */
export const failOpen = (consume: (key: string) => Promise<unknown>, options: SharedLimiterOptions): RateLimiter => {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const pauseMs = options.pauseAfterErrorMs ?? DEFAULT_PAUSE_AFTER_ERROR_MS
  const onError = reporter(options.onError)
  let pausedUntil = 0
  const report = (error: unknown): void => {
    pausedUntil = performance.now() + pauseMs
    onError(error)
  }
  return {
    consume: (key) => {
      if (pausedUntil > 0 && performance.now() < pausedUntil) return ALLOWED
      return new Promise<number>((resolve) => {
        let settled = false
        const timer = setTimeout(() => {
          settled = true
          report(new RateLimitStoreTimeout(timeoutMs))
          resolve(0)
        }, timeoutMs)
        let pending: Promise<unknown>
        try {
          pending = consume(key)
        } catch (error) {
          pending = Promise.reject(error)
        }
        // An answer after the timeout is dropped: that request has been served already.
        pending.then(
          () => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            resolve(0)
          },
          (rejection: unknown) => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            if (rejection instanceof RateLimiterRes) {
              resolve(retryAfterSeconds(rejection.msBeforeNext))
            } else {
              report(rejection)
              resolve(0)
            }
          }
        )
      })
    }
  }
}
