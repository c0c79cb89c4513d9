import { Redis } from "ioredis"
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible"
import {
  clientTimeoutMs,
  DEFAULT_KEY_PREFIX,
  DEFAULT_TIMEOUT_MS,
  storeLimiter,
  reporter,
  type ClosableRateLimiter,
  type SharedLimiterOptions
} from "./store-limiter.js"
import { fixedWindowFor, type RateLimitOptions } from "./window.js"

/** How long a connection attempt may take, and how long `makeRedisRateLimiter` waits for the first one. */
const CONNECT_TIMEOUT_MS = 2000
/** What ioredis rejects a command with when its `commandTimeout` passes without a reply. */
const COMMAND_TIMED_OUT = "Command timed out"
/** Reconnection: soon after a failure, then at most every 5 s (this), for as long as the limiter lives. */
export const MAX_RECONNECT_DELAY_MS = 5000
const reconnectDelay = (attempt: number): number => Math.min(attempt * 250, MAX_RECONNECT_DELAY_MS)

export interface RedisRateLimiterOptions extends RateLimitOptions, SharedLimiterOptions {
  /** `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS. */
  readonly url: string
}

/**
 * One allowance per credential for every process on the Redis server, with keys `{keyPrefix}:{user|client}:{id}`
 * expiring with their window (Redis's own clock). Resolves once connected, or once the first attempt has failed
 * or taken 2 s: Redis being down does not stop a start; until it answers, this process limits each credential by
 * itself (`localCapacity`; `onError` is told, and the client keeps reconnecting). Commands never queue while
 * disconnected: they fail at once, and the request is decided in the process.
 */
export const makeRedisRateLimiter = async (options: RedisRateLimiterOptions): Promise<ClosableRateLimiter> => {
  const { points, durationSeconds } = fixedWindowFor(options)
  if (!/^rediss?:\/\/./.test(options.url)) throw new RangeError("url must be a redis:// or rediss:// URL")
  const client = new Redis(options.url, {
    // Fail fast: a command sent while disconnected errors at once instead of waiting in the offline queue, one in
    // flight when the connection drops is not resent, and one with no reply gives up soon after the request's own wait.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: clientTimeoutMs(options.timeoutMs ?? DEFAULT_TIMEOUT_MS),
    connectTimeout: CONNECT_TIMEOUT_MS,
    retryStrategy: reconnectDelay,
    lazyConnect: true
  })
  // Every failed (re)connection is an 'error' event: reported, never ioredis's own "Unhandled error event" output.
  client.on("error", reporter(options.onError))
  const limiter = new RateLimiterRedis({
    storeClient: client,
    // Refused at once, not even handed to the client, while it is not connected.
    rejectIfRedisNotReady: true,
    keyPrefix: options.keyPrefix ?? DEFAULT_KEY_PREFIX,
    points,
    duration: durationSeconds
  })

  await new Promise<void>((resolve) => {
    const timer = setTimeout(() => settle(), CONNECT_TIMEOUT_MS)
    const settle = () => {
      clearTimeout(timer)
      client.off("ready", settle)
      client.off("error", settle)
      resolve()
    }
    client.once("ready", settle)
    client.once("error", settle)
    // The failure has been reported through the 'error' event already; the client goes on retrying.
    client.connect().catch(() => {})
  })

  let closed = false
  const commandTimeoutMs = clientTimeoutMs(options.timeoutMs ?? DEFAULT_TIMEOUT_MS)
  /** When Redis last answered anything on this client: a busy connection still answers, a silent one does not. */
  let lastReplyAt = performance.now()
  const replied = (): void => {
    lastReplyAt = performance.now()
  }
  /**
   * ioredis reconnects when a connection closes, not when it goes silent (a network cut, a failover that leaves the
   * old address dead): every command then times out on a connection that looks ready, and the limit stays off for
   * good. A command that timed out while nothing at all came back for as long drops the connection, and the retry
   * strategy opens a new one. One that timed out while other replies arrived is a busy Redis, not a dead one: the
   * connection stays (dropping it would fail every request open while it reconnects; docs/operations.md, "Rate limits").
   */
  const reconnectIfSilent = (error: unknown): never => {
    if (error instanceof RateLimiterRes) replied()
    else if (
      !closed &&
      error instanceof Error &&
      error.message === COMMAND_TIMED_OUT &&
      client.status === "ready" &&
      performance.now() - lastReplyAt >= commandTimeoutMs
    ) {
      client.disconnect(true)
    }
    throw error
  }
  const consume = (key: string, count: number) =>
    limiter.consume(key, count).then((result) => {
      replied()
      return result
    }, reconnectIfSilent)
  return {
    ...storeLimiter(consume, { ...options, points, windowSeconds: durationSeconds }),
    close: () => {
      if (!closed) {
        closed = true
        // At once, whatever Redis is doing: the counters need no goodbye.
        client.disconnect()
      }
      return Promise.resolve()
    }
  }
}
