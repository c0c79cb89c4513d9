import { Redacted } from "effect"
import type { ClosableRateLimiter } from "@accord/rate-limit"
import type { AccordConfig } from "./config.js"

export interface ServerRateLimiterOptions {
  /**
   * True in a node:cluster worker (`cluster.isWorker`): the memory limit is then kept by the primary, which must have
   * called `startClusterRateLimitPrimary()` from `@accord/rate-limit` before forking, and shared by every worker.
   */
  readonly clustered: boolean
  /** A store failure: the request was served without the limit (docs/operations.md, "Rate limits"). */
  readonly onError: (error: unknown) => void
}

/**
 * The limiter the configuration asks for, or undefined when the rate limit is off. Rejects when a PostgreSQL limiter
 * cannot create its table; an unreachable Redis does not stop it (requests fail open until Redis answers).
 */
export const makeServerRateLimiter = async (
  config: AccordConfig,
  { clustered, onError }: ServerRateLimiterOptions
): Promise<ClosableRateLimiter | undefined> => {
  const limit = config.rateLimit
  if (limit === undefined) return undefined
  // Loaded only with a rate limit: the package brings both the PostgreSQL and the Redis driver.
  const { makeClusterRateLimiter, makeMemoryRateLimiter, makePostgresRateLimiter, makeRedisRateLimiter } =
    await import("@accord/rate-limit")
  const window = { capacity: limit.capacity, refillPerSecond: limit.refillPerSecond }
  switch (limit.store) {
    case "memory":
      return clustered ? makeClusterRateLimiter({ ...window, onError }) : makeMemoryRateLimiter(window)
    case "postgres":
      if (config.databaseUrl === undefined) throw new Error("--rate-limit-store postgres needs --database-url")
      return makePostgresRateLimiter({
        ...window,
        onError,
        connectionString: Redacted.value(config.databaseUrl),
        ...(config.databaseSchema !== undefined && { schema: config.databaseSchema })
      })
    case "redis":
      if (config.redisUrl === undefined) throw new Error("--rate-limit-store redis needs --redis-url")
      return makeRedisRateLimiter({ ...window, onError, url: Redacted.value(config.redisUrl) })
  }
}
