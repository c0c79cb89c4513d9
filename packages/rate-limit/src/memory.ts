import type { RateLimitQuota } from "@accord/core"
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible"
import type { ClosableRateLimiter } from "./store-limiter.js"
import { fixedWindowFor, retryAfterSeconds, type RateLimitOptions } from "./window.js"

const allowed = (): number => 0
// RateLimiterMemory rejects only with a refusal; anything else would be a bug in it, and is served rather than failed.
const refused = (rejection: unknown): number =>
  rejection instanceof RateLimiterRes ? retryAfterSeconds(rejection.msBeforeNext) : 0

/** Whole seconds until the window ends (0 once it has). */
const resetSeconds = (res: RateLimiterRes): number => Math.max(0, Math.ceil(res.msBeforeNext / 1000))
const allowedQuota = (res: RateLimiterRes): RateLimitQuota => ({
  waitSeconds: 0,
  remaining: res.remainingPoints,
  resetSeconds: resetSeconds(res)
})
const refusedQuota = (rejection: unknown): RateLimitQuota | number =>
  rejection instanceof RateLimiterRes
    ? { waitSeconds: retryAfterSeconds(rejection.msBeforeNext), remaining: 0, resetSeconds: resetSeconds(rejection) }
    : 0

/**
 * The allowance kept in this process: right for one process only (N processes would allow N times the limit). In a
 * node:cluster worker use `makeClusterRateLimiter`; across machines, PostgreSQL or Redis.
 */
export const makeMemoryRateLimiter = (options: RateLimitOptions): ClosableRateLimiter => {
  const { points, durationSeconds } = fixedWindowFor(options)
  const limiter = new RateLimiterMemory({ points, duration: durationSeconds })
  return {
    consume: (key) => limiter.consume(key).then(allowed, refused),
    consumeQuota: (key) => limiter.consume(key).then(allowedQuota, refusedQuota),
    policy: { quota: points, windowSeconds: durationSeconds },
    // Its per-key timers are unref'd: nothing holds the process open.
    close: () => Promise.resolve()
  }
}
