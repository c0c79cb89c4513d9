/**
 * A per-credential rate limit, kept wherever the host chooses (one process, a cluster's primary, PostgreSQL, Redis:
 * `@accord/rate-limit`). The core only asks it, right after the credentials (docs/api.md, "Errors": order of checks).
 */
export interface RateLimiter {
  /**
   * Takes one request from `key`'s allowance. Resolves 0 when the request may go on, else the whole seconds to wait
   * (the 429's Retry-After, at least 1). Never rejects: a limiter whose store fails decides itself what to answer.
   */
  readonly consume: (key: string) => Promise<number>
  /**
   * The same step, also telling the quota left (docs/api.md, "Rate limit": the `RateLimit` and `RateLimit-Policy`
   * headers). Optional: a limiter without it, or that answers a bare number (its store failed and it served the
   * request), gives no rate-limit headers. The handler calls this instead of `consume` when present.
   */
  readonly consumeQuota?: (key: string) => Promise<RateLimitQuota | number>
  /** The policy `consumeQuota` counts against: requests per window, and the window in seconds. */
  readonly policy?: { readonly quota: number; readonly windowSeconds: number }
}

/** One request's outcome with the quota it left. */
export interface RateLimitQuota {
  /** 0: go on; else the whole seconds to wait (Retry-After, at least 1). */
  readonly waitSeconds: number
  /** Requests left in the current window after this one (0 when refused). */
  readonly remaining: number
  /** Whole seconds until the window ends and the quota comes back whole. */
  readonly resetSeconds: number
  /**
   * The requests per window this answer was counted against, when not the limiter's `policy.quota`: a process that
   * limits by itself while its shared store fails states its own share (`@accord/rate-limit`).
   */
  readonly policyQuota?: number
}

/**
 * The draft-ietf-httpapi-ratelimit-headers-10 fields, structured fields (RFC 9651): the policy `"default"` with its
 * quota `q` (the answer's own `policyQuota` when it has one) and window `w`, and the current state of it: remaining
 * `r` and seconds to reset `t`.
 */
export const rateLimitHeaders = (
  policy: { readonly quota: number; readonly windowSeconds: number },
  quota: RateLimitQuota
): Readonly<Record<string, string>> => ({
  "ratelimit-policy": `"default";q=${quota.policyQuota ?? policy.quota};w=${policy.windowSeconds}`,
  ratelimit: `"default";r=${quota.remaining};t=${quota.resetSeconds}`
})
