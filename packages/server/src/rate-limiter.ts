import { Redacted } from "effect"
import type { Logger } from "pino"
import type { ClosableRateLimiter } from "@accord/rate-limit"
import type { AccordConfig } from "./config.js"
import { rateLimitStoreLogging } from "./throttled-log.js"

export interface ServerRateLimiterOptions {
  /**
   * True in a node:cluster worker (`cluster.isWorker`): the memory limit is then kept by the primary, which must have
   * called `startClusterRateLimitPrimary()` from `@accord/rate-limit` before forking, and shared by every worker.
   */
  readonly clustered: boolean
  /** Where the store's failures, and its return, are logged (throttled: `rateLimitStoreLogging`). */
  readonly logger: Logger
  /** An error's own words, never the object (no URL, no stack). */
  readonly describe: (error: unknown) => string
}

/**
 * What one process allows a credential by itself while the shared store fails or is slow: its share of the capacity
 * among the `workers` processes of this machine, at least 1. So one machine's processes together allow at most the
 * capacity (or one each when there are more processes than that) on top of what the store allowed before it failed
 * (docs/operations.md, "Rate limits"). Processes on other machines are not known here: each machine adds its own.
 */
export const localCapacity = (capacity: number, workers: number): number =>
  Math.max(1, Math.floor(capacity / Math.max(1, workers)))

/**
 * The limiter the configuration asks for, or undefined when the rate limit is off. Rejects when a PostgreSQL limiter
 * cannot create its table; an unreachable Redis does not stop it (the process limits by itself until Redis answers).
 */
export const makeServerRateLimiter = async (
  config: AccordConfig,
  { clustered, logger, describe }: ServerRateLimiterOptions
): Promise<ClosableRateLimiter | undefined> => {
  const limit = config.rateLimit
  if (limit === undefined) return undefined
  // Loaded only with a rate limit: the package brings both the PostgreSQL and the Redis driver.
  const { makeClusterRateLimiter, makeMemoryRateLimiter, makePostgresRateLimiter, makeRedisRateLimiter } =
    await import("@accord/rate-limit")
  const window = { capacity: limit.capacity, refillPerSecond: limit.refillPerSecond }
  const local = localCapacity(limit.capacity, clustered ? config.workers : 1)
  const shared = { ...window, ...rateLimitStoreLogging(logger, describe, local), localCapacity: local }
  switch (limit.store) {
    case "memory":
      return clustered ? makeClusterRateLimiter(shared) : makeMemoryRateLimiter(window)
    case "postgres":
      if (config.databaseUrl === undefined) throw new Error("--rate-limit-store postgres needs --database-url")
      return makePostgresRateLimiter({
        ...shared,
        connectionString: Redacted.value(config.databaseUrl),
        ...(config.databaseSchema !== undefined && { schema: config.databaseSchema })
      })
    case "redis":
      if (config.redisUrl === undefined) throw new Error("--rate-limit-store redis needs --redis-url")
      return makeRedisRateLimiter({ ...shared, url: Redacted.value(config.redisUrl) })
  }
}
