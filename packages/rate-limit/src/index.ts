// The public surface of @accord/rate-limit, listed name by name: what is not here is internal to the package.

export { fixedWindowFor, retryAfterSeconds, type FixedWindow, type RateLimitOptions } from "./window.js"
export {
  DEFAULT_KEY_PREFIX,
  DEFAULT_PAUSE_AFTER_ERROR_MS,
  DEFAULT_TIMEOUT_MS,
  RateLimitStoreTimeout,
  type ClosableRateLimiter,
  type LocalReason,
  type SharedLimiterOptions,
  type SharedLimiterStats
} from "./store-limiter.js"
export { makeMemoryRateLimiter } from "./memory.js"
export { makeClusterRateLimiter, startClusterRateLimitPrimary } from "./cluster.js"
export { makePostgresRateLimiter, RATE_LIMIT_TABLE, type PostgresRateLimiterOptions } from "./postgres.js"
export { makeRedisRateLimiter, type RedisRateLimiterOptions } from "./redis.js"
