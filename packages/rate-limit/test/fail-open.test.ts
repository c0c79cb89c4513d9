import { describe, expect, it } from "@effect/vitest"
import { RateLimiterRes } from "rate-limiter-flexible"
import { RateLimitStoreTimeout } from "@accord/rate-limit"
import { failOpen } from "../src/fail-open.js"

describe("failOpen: a store limiter's answers as the core's never-rejecting consume", () => {
  it("answers 0 when the store allows and the Retry-After seconds when it refuses", async () => {
    const allowing = failOpen(() => Promise.resolve(new RateLimiterRes(2, 1000, 1, true)), {})
    expect(await allowing.consume("k")).toBe(0)
    const refusing = failOpen(() => Promise.reject(new RateLimiterRes(0, 2500, 6, false)), {})
    expect(await refusing.consume("k")).toBe(3)
  })

  it("serves the request and tells onError when the store fails or throws, then leaves it alone for a while", async () => {
    const errors: Array<unknown> = []
    let calls = 0
    const failure = new Error("connect ECONNREFUSED 127.0.0.1:1")
    const limiter = failOpen(
      () => {
        calls += 1
        return Promise.reject(failure)
      },
      { onError: (error) => errors.push(error), pauseAfterErrorMs: 60_000 }
    )
    expect(await limiter.consume("k")).toBe(0)
    expect(await limiter.consume("k")).toBe(0)
    expect(errors).toEqual([failure])
    expect(calls).toBe(1)

    const throwing = failOpen(
      () => {
        throw failure
      },
      { onError: (error) => errors.push(error), pauseAfterErrorMs: 0 }
    )
    expect(await throwing.consume("k")).toBe(0)
    expect(errors).toEqual([failure, failure])
  })

  it("serves a request whose store does not answer once timeoutMs has passed, and drops the late answer", async () => {
    const errors: Array<unknown> = []
    let answerLate: (refusal: RateLimiterRes) => void = () => {}
    const limiter = failOpen(
      () =>
        new Promise((_resolve, reject) => {
          answerLate = reject
        }),
      { onError: (error) => errors.push(error), timeoutMs: 50, pauseAfterErrorMs: 0 }
    )
    const started = performance.now()
    expect(await limiter.consume("k")).toBe(0)
    expect(performance.now() - started).toBeLessThan(2000)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(RateLimitStoreTimeout)
    answerLate(new RateLimiterRes(0, 1000, 9, false))
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(errors).toHaveLength(1)
  })

  it("never rejects, even when onError throws", async () => {
    const limiter = failOpen(() => Promise.reject(new Error("down")), {
      onError: () => {
        throw new Error("the logger is down too")
      }
    })
    await expect(limiter.consume("k")).resolves.toBe(0)
  })
})
