import { afterAll, describe, expect, it } from "@effect/vitest"
import { Redis } from "ioredis"
import {
  makeRedisRateLimiter,
  RateLimitStoreTimeout,
  type ClosableRateLimiter,
  type RedisRateLimiterOptions
} from "@accord/rate-limit"
import { answers, freePort, redisUrl, skipReason, startBlackHole, startSwitchableProxy, uniqueName } from "./helpers.js"

const skip = skipReason("REDIS_URL", redisUrl, await answers(redisUrl, 6379))
const url = redisUrl ?? ""

/** The same server at another address (a proxy, a black hole): the URL with its host and port replaced. */
const at = (host: string, port: number): string => {
  const moved = new URL(url)
  moved.hostname = host
  moved.port = String(port)
  return moved.toString()
}

describe.skipIf(skip !== undefined)(
  skip === undefined ? "makeRedisRateLimiter" : `makeRedisRateLimiter (${skip})`,
  () => {
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

    afterAll(async () => {
      await Promise.all(opened.map((limiter) => limiter.close()))
      const admin = new Redis(url)
      try {
        const left = await admin.keys(`${keyPrefix}:*`)
        if (left.length > 0) await admin.del(...left)
      } finally {
        admin.disconnect()
      }
    })

    it("two limiters, as two processes would have, share one allowance in keys under their prefix", async () => {
      const [first, second] = await Promise.all([make(), make()])
      const waits: Array<number> = []
      for (let index = 0; index < 8; index++) waits.push(await (index % 2 === 0 ? first : second).consume("user:u_1"))
      expect(waits.slice(0, 5)).toEqual([0, 0, 0, 0, 0])
      // Refused with the seconds left of the 5 s window that started with the first request.
      expect(Math.min(...waits.slice(5))).toBeGreaterThanOrEqual(4)
      expect(Math.max(...waits.slice(5))).toBeLessThanOrEqual(5)
      expect(await second.consume("client:web")).toBe(0)
      expect(await keys()).toEqual([`${keyPrefix}:client:web`, `${keyPrefix}:user:u_1`])
    })

    it("fails open when Redis is unreachable: the request is served at once, onError told, nothing rejects", async () => {
      const errors: Array<unknown> = []
      const limiter = await make({
        url: at("127.0.0.1", 1),
        pauseAfterErrorMs: 0,
        onError: (error) => errors.push(error)
      })
      expect(String(errors[0])).toMatch(/ECONNREFUSED/)
      const started = performance.now()
      for (let index = 0; index < 7; index++) expect(await limiter.consume("user:u_1")).toBe(0)
      expect(performance.now() - started).toBeLessThan(1000)
      expect(errors.length).toBeGreaterThanOrEqual(8)
    })

    it("does not hold a start when Redis is down, and limits once it comes up", async () => {
      const port = await freePort()
      const errors: Array<unknown> = []
      const limiter = await make({ url: at("127.0.0.1", port), capacity: 1, onError: (error) => errors.push(error) })
      expect(await limiter.consume("user:late")).toBe(0)
      expect(errors.length).toBeGreaterThan(0)
      const proxy = await startSwitchableProxy(url, 6379, port)
      try {
        // The client reconnects within a second or two; until then requests are served.
        const deadline = performance.now() + 10_000
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
    })

    it("fails open within its timeout when Redis accepts connections and never answers", async () => {
      const blackHole = await startBlackHole()
      const errors: Array<unknown> = []
      const starting = performance.now()
      const limiter = await make({
        url: at(blackHole.host, blackHole.port),
        timeoutMs: 200,
        onError: (e) => errors.push(e)
      })
      // The start waits at most 2 s for the first connection (here the handshake times out sooner).
      expect(performance.now() - starting).toBeLessThan(4000)
      const started = performance.now()
      expect(await limiter.consume("user:u_1")).toBe(0)
      expect(performance.now() - started).toBeLessThan(1500)
      expect(errors.length).toBeGreaterThanOrEqual(1)
      await limiter.close()
      await blackHole.close()
    })

    it("fails open within its timeout when Redis goes silent after answering", async () => {
      const proxy = await startSwitchableProxy(url, 6379)
      const errors: Array<unknown> = []
      const limiter = await make({
        url: at(proxy.host, proxy.port),
        capacity: 1,
        timeoutMs: 300,
        onError: (error) => errors.push(error)
      })
      expect([await limiter.consume("user:silent"), await limiter.consume("user:silent")]).toEqual([0, 1])
      proxy.blackHole()
      const started = performance.now()
      expect(await limiter.consume("user:silent")).toBe(0)
      expect(performance.now() - started).toBeLessThan(1500)
      expect(errors[0]).toBeInstanceOf(RateLimitStoreTimeout)
      await limiter.close()
      await proxy.close()
    })
  }
)
