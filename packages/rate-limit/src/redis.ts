import { Redis } from "ioredis"
import { RateLimiterRedis } from "rate-limiter-flexible"
import {
  DEFAULT_KEY_PREFIX,
  DEFAULT_TIMEOUT_MS,
  failOpen,
  reporter,
  type ClosableRateLimiter,
  type SharedLimiterOptions
} from "./fail-open.js"
import { fixedWindowFor, type RateLimitOptions } from "./window.js"

/** How long a connection attempt may take, and how long `makeRedisRateLimiter` waits for the first one. */
const CONNECT_TIMEOUT_MS = 2000
/** Reconnection: soon after a failure, then at most every 5 s, for as long as the limiter lives. */
const reconnectDelay = (attempt: number): number => Math.min(attempt * 250, 5000)

export interface RedisRateLimiterOptions extends RateLimitOptions, SharedLimiterOptions {
  /** `redis://[user:password@]host:port[/db]`, or `rediss://` for TLS. */
  readonly url: string
}

/**
 * One allowance per credential for every process on the Redis server, with keys `{keyPrefix}:{user|client}:{id}`
 * expiring with their window (Redis's own clock). Resolves once connected, or once the first attempt has failed
 * or taken 2 s: Redis being down does not stop a start; until it answers, requests fail open (`onError` is told,
 * and the client keeps reconnecting). Commands never queue while disconnected: they fail at once, and are served.
 */
export const makeRedisRateLimiter = async (options: RedisRateLimiterOptions): Promise<ClosableRateLimiter> => {
  const { points, durationSeconds } = fixedWindowFor(options)
  if (!/^rediss?:\/\/./.test(options.url)) throw new RangeError("url must be a redis:// or rediss:// URL")
  const client = new Redis(options.url, {
    // Fail fast: a command sent while disconnected errors at once instead of waiting in the offline queue, one in
    // flight when the connection drops is not resent, and one with no reply gives up with the request's own wait.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
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
  return {
    ...failOpen((key) => limiter.consume(key), options),
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
