import { describe, expect, it } from "@effect/vitest"
import { fixedWindowFor, retryAfterSeconds } from "@accord/rate-limit"

describe("fixedWindowFor: a token bucket as rate-limiter-flexible's fixed window", () => {
  it("gives capacity requests per capacity / refill seconds, rounded up to a whole second", () => {
    expect(fixedWindowFor({ capacity: 5, refillPerSecond: 1 })).toEqual({ points: 5, durationSeconds: 5 })
    expect(fixedWindowFor({ capacity: 4, refillPerSecond: 4 })).toEqual({ points: 4, durationSeconds: 1 })
    expect(fixedWindowFor({ capacity: 5, refillPerSecond: 2 })).toEqual({ points: 5, durationSeconds: 3 })
    expect(fixedWindowFor({ capacity: 3, refillPerSecond: 0.3 })).toEqual({ points: 3, durationSeconds: 10 })
    // Never under a second: a refill faster than the capacity allows the capacity per second.
    expect(fixedWindowFor({ capacity: 10, refillPerSecond: 100 })).toEqual({ points: 10, durationSeconds: 1 })
  })

  it("never allows more than capacity plus the refill over any stretch of time", () => {
    for (const capacity of [1, 2, 5, 7, 100]) {
      for (const refillPerSecond of [0.1, 0.5, 1, 3, 50]) {
        const { points, durationSeconds } = fixedWindowFor({ capacity, refillPerSecond })
        // Windows start at least durationSeconds apart: in T seconds at most 1 + floor(T / duration) of them.
        for (const seconds of [0, 0.5, 1, 2.5, 10, 61]) {
          const allowed = points * (1 + Math.floor(seconds / durationSeconds))
          expect(allowed).toBeLessThanOrEqual(capacity + refillPerSecond * seconds + 1e-9)
        }
      }
    }
  })

  it("refuses a capacity or refill it cannot honour", () => {
    expect(() => fixedWindowFor({ capacity: 0, refillPerSecond: 1 })).toThrow(RangeError)
    expect(() => fixedWindowFor({ capacity: 1.5, refillPerSecond: 1 })).toThrow(RangeError)
    expect(() => fixedWindowFor({ capacity: 1, refillPerSecond: 0 })).toThrow(RangeError)
    expect(() => fixedWindowFor({ capacity: 1, refillPerSecond: Number.POSITIVE_INFINITY })).toThrow(RangeError)
  })

  it("answers Retry-After in whole seconds, at least 1", () => {
    expect([retryAfterSeconds(4001), retryAfterSeconds(1000), retryAfterSeconds(1), retryAfterSeconds(-1)]).toEqual([
      5, 1, 1, 1
    ])
  })
})
