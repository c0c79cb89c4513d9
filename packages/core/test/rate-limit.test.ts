import { describe, expect, it } from "@effect/vitest"
import { makeRateLimiter } from "@accord/core"

describe("makeRateLimiter", () => {
  it("lets `capacity` requests through, then asks to wait until a token is back", () => {
    let now = 0
    const check = makeRateLimiter({ capacity: 3, refillPerSecond: 0.5 }, () => now)
    expect([check("a"), check("a"), check("a")]).toEqual([0, 0, 0])
    expect(check("a")).toBe(2)
    expect(check("b")).toBe(0)
    now = 2000
    expect(check("a")).toBe(0)
    expect(check("a")).toBe(2)
  })

  it("never refills past capacity", () => {
    let now = 0
    const check = makeRateLimiter({ capacity: 2, refillPerSecond: 10 }, () => now)
    now = 60_000
    expect([check("a"), check("a"), check("a")]).toEqual([0, 0, 1])
  })

  it("forgets the least recently used credential when it tracks too many", () => {
    const check = makeRateLimiter({ capacity: 1, refillPerSecond: 0.001, maxTracked: 2 }, () => 0)
    check("a")
    check("b")
    check("c")
    expect(check("a")).toBe(0)
    expect(check("c")).toBeGreaterThan(0)
  })
})
