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

/** Whether Redis (shared) or the process (local, its quota stated) decided a request of `key`. */
const sharedOrLocal = async (limiter: ClosableRateLimiter, key: string): Promise<"shared" | "local"> => {
  const quota = await limiter.consumeQuota?.(key)
  if (quota === undefined || typeof quota === "number") throw new Error("a Redis limiter tells its quota")
  return quota.policyQuota === undefined ? "shared" : "local"
}

/** Asks every 100 ms until Redis decides a request of `key`; gives up after ten times the longest reconnection delay. */
const untilShared = async (limiter: ClosableRateLimiter, key: string): Promise<void> => {
  const giveUp = performance.now() + 10 * MAX_RECONNECT_DELAY_MS
  while ((await sharedOrLocal(limiter, key)) === "local") {
    if (performance.now() > giveUp) throw new Error("the shared limit never applied again")
    await new Promise((resolve) => setTimeout(resolve, 100))
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
    it("reconnects when its connection goes silent: the shared limit applies again once Redis is reachable", async () => {
      const proxy = await startSwitchableProxy(url, 6379)
      const errors: Array<unknown> = []
      const limiter = await make({
        url: withAddress(url, "127.0.0.1", proxy.port),
        capacity: 1,
        refillPerSecond: 0.1,
        timeoutMs: 200,
        pauseAfterErrorMs: 0,
        onError: (error) => errors.push(error)
      })
      try {
        expect(await limiter.consume("user:reconnects")).toBe(0)
        expect(await limiter.consume("user:reconnects")).toBeGreaterThan(0)
        proxy.blackHole()
        // Limited in the process while nothing answers.
        expect(await sharedOrLocal(limiter, "user:reconnects-other")).toBe("local")
        expect(errors.length).toBeGreaterThan(0)
        proxy.healNew()
        // The client's next attempt comes within its longest back-off (5 s); this only bounds a client that never
        // comes back, ten times over, so a slow machine cannot fail it.
        await untilShared(limiter, "user:reconnects-other")
      } finally {
        await limiter.close()
        await proxy.close()
      }
    }, 60_000)

    it("does not hold a start when Redis is down, and limits with it once it comes up", async () => {
      const port = await freePort()
      const errors: Array<unknown> = []
      const limiter = await make({
        url: withAddress(url, "127.0.0.1", port),
        capacity: 1,
        refillPerSecond: 0.1,
        onError: (error) => errors.push(error)
      })
      expect(await sharedOrLocal(limiter, "user:late")).toBe("local")
      expect(errors.length).toBeGreaterThan(0)
      const proxy = await startSwitchableProxy(url, 6379, port)
      try {
        // The client connects within its back-off; until then requests are decided in the process (bound as above).
        await untilShared(limiter, "user:late")
        // Redis counted that one: the next is refused by the shared limit (a 10 s window).
        const refused = await limiter.consumeQuota?.("user:late")
        expect(typeof refused === "number" ? refused : [refused?.waitSeconds, refused?.policyQuota]).toEqual([
          expect.any(Number),
          undefined
        ])
        expect(await limiter.consume("user:late")).toBeGreaterThan(0)
      } finally {
        await limiter.close()
        await proxy.close()
      }
    }, 60_000)
  }
)
