import cluster from "node:cluster"
import { RateLimiterCluster, RateLimiterClusterMaster } from "rate-limiter-flexible"
import {
  clientTimeoutMs,
  DEFAULT_KEY_PREFIX,
  DEFAULT_TIMEOUT_MS,
  storeLimiter,
  type ClosableRateLimiter,
  type SharedLimiterOptions
} from "./store-limiter.js"
import { fixedWindowFor, type RateLimitOptions } from "./window.js"

/**
 * In a node:cluster primary: keeps the allowances of every worker's `makeClusterRateLimiter` in the primary's memory,
 * answering the workers over IPC. Call it once, before the first `cluster.fork()`: a worker announces its limiter as
 * it starts, and an announcement the primary does not hear leaves that worker limiting by itself. Calling it again is
 * harmless; it starts nothing until a worker asks.
 */
export const startClusterRateLimitPrimary = (): void => {
  if (!cluster.isPrimary) throw new Error("startClusterRateLimitPrimary runs in the cluster's primary process")
  // A singleton: rate-limiter-flexible returns the instance it made first.
  void new RateLimiterClusterMaster()
}

/**
 * In a node:cluster worker: one allowance shared by every worker of the cluster, kept by the primary (which must have
 * called `startClusterRateLimitPrimary`). While the primary does not answer within `timeoutMs`, each worker limits by
 * itself (`localCapacity`: give each of W workers `max(1, floor(capacity / W))`).
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
    // Its own wait for the primary ends soon after ours, so no pending call long outlives the request it was for.
    timeoutMs: clientTimeoutMs(options.timeoutMs ?? DEFAULT_TIMEOUT_MS)
  })
  return {
    ...storeLimiter((key, count) => limiter.consume(key, count), {
      ...options,
      points,
      windowSeconds: durationSeconds
    }),
    close: () => Promise.resolve()
  }
}
