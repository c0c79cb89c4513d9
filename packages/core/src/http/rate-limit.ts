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
}
