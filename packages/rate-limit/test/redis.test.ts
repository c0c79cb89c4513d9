import { expect, it } from "@effect/vitest"
import { Redis } from "ioredis"
import { makeRedisRateLimiter, type ClosableRateLimiter, type RedisRateLimiterOptions } from "@accord/rate-limit"
import { MAX_RECONNECT_DELAY_MS } from "../src/redis.js"
import { answers, freePort, redisUrl, skipReason, startSwitchableProxy, uniqueName, withAddress } from "./helpers.js"
import { describeSharedLimiterStore } from "./store-contract.js"

const skip = skipReason("REDIS_URL", redisUrl, await answers(redisUrl, 6379))
const url = redisUrl ?? ""

const keyPrefix = uniqueName("accord-rl-test")
const opened: Array<ClosableRateLimiter> = []
const make = async (options: Partial<RedisRateLimiterOptions> = {}) => {
  const limiter = await makeRedisRateLimiter({ capacity: 5, refillPerSecond: 1, url, keyPrefix, ...options })
  opened.push(limiter)
  return limiter
}
const keys = async (): Promise<ReadonlyArray<string>> => {
  const admin = new Redis(url)
  try {
    return (await admin.keys(`${keyPrefix}:*`)).sort()
  } finally {
    admin.disconnect()
  }
}

describeSharedLimiterStore(
  {
    name: "makeRedisRateLimiter",
    skip,
    store: "Redis",
    url,
    defaultPort: 6379,
    connection: "persistent",
    make: (options, elsewhere) => make({ ...options, ...(elsewhere !== undefined && { url: elsewhere.url }) }),
    cleanup: async () => {
      await Promise.all(opened.map((limiter) => limiter.close()))
      const admin = new Redis(url)
      try {
        const left = await admin.keys(`${keyPrefix}:*`)
        if (left.length > 0) await admin.del(...left)
      } finally {
        admin.disconnect()
      }
    },
    layout: {
      description: "one key per credential under their prefix",
      expectStored: async () => {
        expect(await keys()).toEqual([`${keyPrefix}:client:web`, `${keyPrefix}:user:u_1`])
      }
    }
  },
  () => {
    it("reconnects when its connection goes silent: limits again once Redis is reachable", async () => {
      const proxy = await startSwitchableProxy(url, 6379)
      const errors: Array<unknown> = []
      const limiter = await make({
        url: withAddress(url, "127.0.0.1", proxy.port),
        capacity: 1,
        timeoutMs: 200,
        pauseAfterErrorMs: 0,
        onError: (error) => errors.push(error)
      })
      try {
        expect(await limiter.consume("user:reconnects")).toBe(0)
        expect(await limiter.consume("user:reconnects")).toBeGreaterThan(0)
        proxy.blackHole()
        // Fails open while nothing answers.
        expect(await limiter.consume("user:reconnects")).toBe(0)
        expect(errors.length).toBeGreaterThan(0)
        proxy.healNew()
        // The client's next attempt comes within its longest back-off (5 s); this only bounds a client that never
        // comes back, ten times over, so a slow machine cannot fail it.
        const giveUp = performance.now() + 10 * MAX_RECONNECT_DELAY_MS
        let wait = 0
        while (wait === 0 && performance.now() < giveUp) {
          await new Promise((resolve) => setTimeout(resolve, 100))
          wait = await limiter.consume("user:reconnects")
        }
        expect(wait, "the limit is on again once Redis is reachable").toBeGreaterThan(0)
      } finally {
        await limiter.close()
        await proxy.close()
      }
    }, 60_000)

    it("does not hold a start when Redis is down, and limits once it comes up", async () => {
      const port = await freePort()
      const errors: Array<unknown> = []
      const limiter = await make({
        url: withAddress(url, "127.0.0.1", port),
        capacity: 1,
        onError: (error) => errors.push(error)
      })
      expect(await limiter.consume("user:late")).toBe(0)
      expect(errors.length).toBeGreaterThan(0)
      const proxy = await startSwitchableProxy(url, 6379, port)
      try {
        // The client reconnects within its back-off; until then requests are served (bound as above).
        const deadline = performance.now() + 10 * MAX_RECONNECT_DELAY_MS
        let wait = 0
        while (wait === 0 && performance.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 100))
          wait = await limiter.consume("user:late")
        }
        expect(wait).toBe(1)
      } finally {
        await limiter.close()
        await proxy.close()
      }
    }, 60_000)
  }
)
