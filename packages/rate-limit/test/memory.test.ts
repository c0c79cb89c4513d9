import { describe, expect, it } from "@effect/vitest"
import { makeMemoryRateLimiter } from "@accord/rate-limit"

const consumeTimes = (consume: (key: string) => Promise<number>, key: string, times: number) =>
  Promise.all(Array.from({ length: times }, () => consume(key)))

describe("makeMemoryRateLimiter", () => {
  it("allows capacity requests, then refuses with the seconds left in the window; each key has its own", async () => {
    const limiter = makeMemoryRateLimiter({ capacity: 3, refillPerSecond: 0.5 })
    expect(await consumeTimes(limiter.consume, "user:a", 3)).toEqual([0, 0, 0])
    // The window is 3 / 0.5 = 6 s and started a moment ago.
    expect(await limiter.consume("user:a")).toBe(6)
    expect(await limiter.consume("user:b")).toBe(0)
    await limiter.close()
  })

  it("gives the whole capacity back when the window ends", async () => {
    const limiter = makeMemoryRateLimiter({ capacity: 2, refillPerSecond: 2 })
    expect(await consumeTimes(limiter.consume, "user:a", 3)).toEqual([0, 0, 1])
    await new Promise((resolve) => setTimeout(resolve, 1100))
    expect(await consumeTimes(limiter.consume, "user:a", 3)).toEqual([0, 0, 1])
    await limiter.close()
  })
})
