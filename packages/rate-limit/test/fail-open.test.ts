import { describe, expect, it, vi } from "@effect/vitest"
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible"
import { RateLimitStoreTimeout } from "@accord/rate-limit"
import { BUSY_RETRY_AFTER_SECONDS, failOpen, MAX_WAITING_KEYS, type StoreConsume } from "../src/fail-open.js"

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A store that counts like the real ones (rate-limiter-flexible's memory limiter) and answers after `latencyMs`. */
const slowStore = (points: number, latencyMs: number) => {
  const counts = new RateLimiterMemory({ points, duration: 5 })
  const statements: Array<{ readonly key: string; readonly count: number }> = []
  const consume: StoreConsume = async (key, count) => {
    statements.push({ key, count })
    await sleep(latencyMs)
    return counts.consume(key, count)
  }
  return { consume, statements }
}

/** A store whose statements never come back: a hung connection. */
const hungStore = () => {
  const statements: Array<string> = []
  const consume: StoreConsume = (key) => {
    statements.push(key)
    return new Promise(() => {})
  }
  return { consume, statements }
}

const passed = (waits: ReadonlyArray<number>) => waits.filter((wait) => wait === 0).length

describe("failOpen: a store limiter's answers as the core's never-rejecting consume", () => {
  it("answers 0 when the store allows and the Retry-After seconds when it refuses", async () => {
    const allowing = failOpen(() => Promise.resolve(new RateLimiterRes(2, 1000, 1, true)), { points: 3 })
    expect(await allowing.consume("k")).toBe(0)
    const refusing = failOpen(() => Promise.reject(new RateLimiterRes(0, 2500, 6, false)), { points: 5 })
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
      { points: 5, onError: (error) => errors.push(error), pauseAfterErrorMs: 60_000 }
    )
    expect(await limiter.consume("k")).toBe(0)
    expect(await limiter.consume("k")).toBe(0)
    expect(errors).toEqual([failure])
    expect(calls).toBe(1)

    const throwing = failOpen(
      () => {
        throw failure
      },
      { points: 5, onError: (error) => errors.push(error), pauseAfterErrorMs: 0 }
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
      { points: 5, onError: (error) => errors.push(error), timeoutMs: 50, pauseAfterErrorMs: 0 }
    )
    // The store never answers by itself: the request can only be served by its time-out, which onError names.
    expect(await limiter.consume("k")).toBe(0)
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(RateLimitStoreTimeout)
    answerLate(new RateLimiterRes(0, 1000, 9, false))
    await new Promise((resolve) => setTimeout(resolve, 10))
    expect(errors).toHaveLength(1)
  })

  it("never rejects, even when onError throws", async () => {
    const limiter = failOpen(() => Promise.reject(new Error("down")), {
      points: 5,
      onError: () => {
        throw new Error("the logger is down too")
      }
    })
    await expect(limiter.consume("k")).resolves.toBe(0)
  })

  it("counts the concurrent requests of one key with one statement: the first ones the window has room for pass", async () => {
    const store = slowStore(5, 20)
    const limiter = failOpen(store.consume, { points: 5 })
    const waits = await Promise.all(Array.from({ length: 1000 }, () => limiter.consume("user:burst")))
    expect(passed(waits)).toBe(5)
    // The first request's statement, then one for everything that arrived meanwhile (counted up to the allowance).
    expect(store.statements).toEqual([
      { key: "user:burst", count: 1 },
      { key: "user:burst", count: 5 }
    ])
    for (const wait of waits.filter((wait) => wait > 0)) expect(wait).toBe(5)
  })

  it("refuses, without failing open, a request that waited its whole timeout for a busy store's turn", async () => {
    const errors: Array<unknown> = []
    // One statement at a time, each answered in 200 ms: the store is slow, never down.
    const store = slowStore(5, 200)
    const limiter = failOpen(store.consume, {
      points: 5,
      maxInFlight: 1,
      timeoutMs: 500,
      onError: (error) => errors.push(error)
    })
    // On the test's own clock, so that a busy machine's late timers cannot reorder what the case is about.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] })
    let waits: ReadonlyArray<number> = []
    try {
      const all = Promise.all(["user:a", "user:b", "user:c", "user:d"].map((key) => limiter.consume(key)))
      await vi.advanceTimersByTimeAsync(1000)
      waits = await all
    } finally {
      vi.useRealTimers()
    }
    // a, b and c are sent at 0, 200 and 400 ms, each within its 500 ms; d's turn would come at 600 ms.
    expect(waits).toEqual([0, 0, 0, BUSY_RETRY_AFTER_SECONDS])
    expect(errors).toEqual([])
    expect(store.statements.map((statement) => statement.key)).toEqual(["user:a", "user:b", "user:c"])
    // Not paused: the next request is counted again.
    expect(await limiter.consume("user:a")).toBe(0)
    expect(store.statements).toHaveLength(4)
  })

  it("refuses a new key at once past MAX_WAITING_KEYS keys waiting", async () => {
    const store = hungStore()
    const limiter = failOpen(store.consume, { points: 5, maxInFlight: 1, timeoutMs: 60_000 })
    // The first is sent (and hangs); the next MAX_WAITING_KEYS wait their turn.
    for (let index = 0; index <= MAX_WAITING_KEYS; index++) void limiter.consume(`user:${index}`)
    // At once: settled before the event loop's next turn, with no statement sent and no time-out waited for.
    const pending = Symbol("still pending")
    const settled = await Promise.race([
      limiter.consume("user:one-too-many"),
      new Promise<typeof pending>((resolve) => setImmediate(() => resolve(pending)))
    ])
    expect(settled).toBe(BUSY_RETRY_AFTER_SECONDS)
    expect(store.statements).toEqual(["user:0"])
  })

  it("serves the requests of a statement the store did not answer in time, and those waiting behind it", async () => {
    const errors: Array<unknown> = []
    const store = hungStore()
    const limiter = failOpen(store.consume, {
      points: 5,
      maxInFlight: 1,
      timeoutMs: 100,
      pauseAfterErrorMs: 0,
      onError: (error) => errors.push(error)
    })
    const sent = limiter.consume("user:a")
    const waiting = limiter.consume("user:b")
    expect(await Promise.all([sent, waiting])).toEqual([0, 0])
    // One failure: the statement's. The request behind it was served because the store had just failed.
    expect(errors).toEqual([expect.any(RateLimitStoreTimeout)])
    expect(store.statements).toEqual(["user:a"])
  })
})
