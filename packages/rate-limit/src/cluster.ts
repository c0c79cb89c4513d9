import cluster from "node:cluster"
import { RateLimiterCluster, RateLimiterClusterMaster } from "rate-limiter-flexible"
import {
  DEFAULT_KEY_PREFIX,
  DEFAULT_TIMEOUT_MS,
  failOpen,
  type ClosableRateLimiter,
  type SharedLimiterOptions
} from "./fail-open.js"
import { fixedWindowFor, type RateLimitOptions } from "./window.js"

/**
 * In a node:cluster primary: keeps the allowances of every worker's `makeClusterRateLimiter` in the primary's memory,
 * answering the workers over IPC. Call it once, before the first `cluster.fork()`: a worker announces its limiter as
 * it starts, and an announcement the primary does not hear leaves that worker without a limit (failing open). Calling
 * it again is harmless; it starts nothing until a worker asks.
 */
export const startClusterRateLimitPrimary = (): void => {
  if (!cluster.isPrimary) throw new Error("startClusterRateLimitPrimary runs in the cluster's primary process")
  // A singleton: rate-limiter-flexible returns the instance it made first.
  void new RateLimiterClusterMaster()
}

/**
 * In a node:cluster worker: one allowance shared by every worker of the cluster, kept by the primary (which must have
 * called `startClusterRateLimitPrimary`). A primary that does not answer within `timeoutMs` fails open.
 */
export const makeClusterRateLimiter = (options: RateLimitOptions & SharedLimiterOptions): ClosableRateLimiter => {
  if (!cluster.isWorker) {
    throw new Error("makeClusterRateLimiter runs in a cluster worker; in one process use makeMemoryRateLimiter")
  }
  const { points, durationSeconds } = fixedWindowFor(options)
  const limiter = new RateLimiterCluster({
    points,
    duration: durationSeconds,
    keyPrefix: options.keyPrefix ?? DEFAULT_KEY_PREFIX,
    // Its own wait for the primary ends with ours, so no pending call outlives the request it was for.
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  })
  return {
    ...failOpen((key, count) => limiter.consume(key, count), { ...options, points, windowSeconds: durationSeconds }),
    close: () => Promise.resolve()
  }
}
