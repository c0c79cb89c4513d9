import { describe, expect, it, vi } from "@effect/vitest"
import { createServer, connect, type Socket } from "node:net"
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible"
import type { RateLimitQuota } from "@accord/core"
import { RateLimitStoreTimeout } from "@accord/rate-limit"
import { MAX_WAITING_KEYS, storeLimiter, type StoreConsume, type StoreLimiterOptions } from "../src/store-limiter.js"

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

/** The limiter under test: a 5 s window unless told otherwise. */
const limiterOf = (
  consume: StoreConsume,
  options: Omit<StoreLimiterOptions, "windowSeconds"> & { windowSeconds?: number }
) => storeLimiter(consume, { windowSeconds: 5, ...options })

const quotaOf = (limiter: ReturnType<typeof limiterOf>, key: string): Promise<RateLimitQuota> => {
  const consumeQuota = limiter.consumeQuota
  if (consumeQuota === undefined) throw new Error("a store limiter tells its quota")
  return consumeQuota(key).then((quota) => {
    if (typeof quota === "number") throw new Error(`a bare number: ${quota}`)
    return quota
  })
}

const passed = (waits: ReadonlyArray<number>) => waits.filter((wait) => wait === 0).length

describe("storeLimiter: a store limiter's answers as the core's never-rejecting consume", () => {
  it("answers 0 when the store allows and the Retry-After seconds when it refuses", async () => {
    const allowing = limiterOf(() => Promise.resolve(new RateLimiterRes(2, 1000, 1, true)), { points: 3 })
    expect(await allowing.consume("k")).toBe(0)
    const refusing = limiterOf(() => Promise.reject(new RateLimiterRes(0, 2500, 6, false)), { points: 5 })
    expect(await refusing.consume("k")).toBe(3)
  })

  it("limits by itself when the store fails or throws (localCapacity per window), tells onError, then leaves the store alone a while", async () => {
    const errors: Array<unknown> = []
    let calls = 0
    const failure = new Error("connect ECONNREFUSED 127.0.0.1:1")
    const limiter = limiterOf(
      () => {
        calls += 1
        return Promise.reject(failure)
      },
      { points: 5, localCapacity: 2, onError: (error) => errors.push(error), pauseAfterErrorMs: 60_000 }
    )
    const quotas = [await quotaOf(limiter, "k"), await quotaOf(limiter, "k"), await quotaOf(limiter, "k")]
    // Its own quota, stated (the RateLimit-Policy header's q): 2 per 5 s window.
    expect(quotas.map((quota) => [quota.waitSeconds, quota.remaining, quota.policyQuota])).toEqual([
      [0, 1, 2],
      [0, 0, 2],
      [5, 0, 2]
    ])
    // Another credential has its own local allowance.
    expect(await limiter.consume("other")).toBe(0)
    expect(errors).toEqual([failure])
    expect(calls).toBe(1)
    expect(limiter.stats?.()).toEqual({
      limitingLocally: true,
      statements: 1,
      storeFailures: 1,
      local: { failed: { allowed: 3, refused: 1 }, busy: { allowed: 0, refused: 0 } }
    })

    const throwing = limiterOf(
      () => {
        throw failure
      },
      { points: 5, onError: (error) => errors.push(error), pauseAfterErrorMs: 0 }
    )
    expect(await throwing.consume("k")).toBe(0)
    expect(errors).toEqual([failure, failure])
  })

  it("counts what the store allowed this process in the window: a failure mid-window leaves only the rest of the local capacity", async () => {
    let failing = false
    const store = slowStore(5, 0)
    const limiter = limiterOf(
      (key, count) => (failing ? Promise.reject(new Error("down")) : store.consume(key, count)),
      {
        points: 5,
        pauseAfterErrorMs: 0
      }
    )
    for (let index = 0; index < 3; index++) expect(await limiter.consume("user:a")).toBe(0)
    failing = true
    const waits = []
    for (let index = 0; index < 4; index++) waits.push(await limiter.consume("user:a"))
    // 3 through the store, then 2 of the local 5: never more than the capacity from this process in one window.
    expect(waits.map((wait) => wait > 0)).toEqual([false, false, true, true])
  })

  it("tells the store, once it answers again, what the process allowed by itself: the window's count includes them", async () => {
    let failing = true
    const store = slowStore(5, 0)
    const limiter = limiterOf(
      (key, count) => (failing ? Promise.reject(new Error("down")) : store.consume(key, count)),
      { points: 5, pauseAfterErrorMs: 0 }
    )
    const waits = []
    for (let index = 0; index < 3; index++) waits.push(await limiter.consume("user:a"))
    failing = false
    for (let index = 0; index < 4; index++) waits.push(await limiter.consume("user:a"))
    // 3 allowed by the process, then the store: its first statement carries them, so it has room for 2 more only.
    expect(waits.map((wait) => wait > 0)).toEqual([false, false, false, false, false, true, true])
    expect(store.statements.filter((statement) => statement.key === "user:a")).toEqual([
      { key: "user:a", count: 4 },
      { key: "user:a", count: 1 }
    ])
  })

  it("does not count twice what a statement that timed out carried, when the store answers it late", async () => {
    const counts = new RateLimiterMemory({ points: 5, duration: 5 })
    const statements: Array<number> = []
    let hang = true
    let answerLate: () => void = () => {}
    const limiter = limiterOf(
      (key, count) => {
        statements.push(count)
        const counted = () => counts.consume(key, count)
        return hang
          ? new Promise((resolve, reject) => (answerLate = () => void counted().then(resolve, reject)))
          : counted()
      },
      { points: 5, timeoutMs: 50, pauseAfterErrorMs: 0 }
    )
    // Timed out: allowed by the process (owed to the store), then counted by the store all the same, late.
    expect(await limiter.consume("user:a")).toBe(0)
    answerLate()
    await sleep(10)
    hang = false
    expect(await limiter.consume("user:a")).toBe(0)
    // The second statement carries nothing: the late answer settled what the first request owed.
    expect(statements).toEqual([1, 1])
  })

  it("decides a request the store has not answered once timeoutMs has passed by itself, and drops the late answer", async () => {
    const errors: Array<unknown> = []
    let answerLate: (refusal: RateLimiterRes) => void = () => {}
    const limiter = limiterOf(
      () =>
        new Promise((_resolve, reject) => {
          answerLate = reject
        }),
      { points: 5, localCapacity: 1, onError: (error) => errors.push(error), timeoutMs: 50, pauseAfterErrorMs: 0 }
    )
    // The store never answers by itself: the request can only be answered on its time-out, which onError names.
    const [first, second] = await Promise.all([quotaOf(limiter, "k"), quotaOf(limiter, "k")])
    expect([first.waitSeconds, first.policyQuota]).toEqual([0, 1])
    expect([second.waitSeconds > 0, second.policyQuota]).toEqual([true, 1])
    expect(errors).toHaveLength(1)
    expect(errors[0]).toBeInstanceOf(RateLimitStoreTimeout)
    answerLate(new RateLimiterRes(0, 1000, 9, false))
    await sleep(10)
    expect(errors).toHaveLength(1)
  })

  it("does not take an answer that came while its own event loop was busy for a slow store", async () => {
    // A store over a real socket whose answer is on its way at once: I/O, read only once the loop is free again.
    const server = createServer()
    const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    if (address === null || typeof address === "string") throw new Error("no TCP address")
    const client = connect(address.port, "127.0.0.1")
    const storeSide = await accepted
    const counts = new RateLimiterMemory({ points: 5, duration: 5 })
    const errors: Array<unknown> = []
    const limiter = limiterOf(
      (key, count) =>
        new Promise((resolve, reject) => {
          client.once("data", () => counts.consume(key, count).then(resolve, reject))
          storeSide.write("answered")
        }),
      { points: 5, timeoutMs: 50, onError: (error) => errors.push(error) }
    )
    try {
      const answer = quotaOf(limiter, "k")
      // The loop busy well past the time-out (a burst being parsed): the answer and the timer are both due after it.
      const until = performance.now() + 200
      while (performance.now() < until) {
        // Busy.
      }
      expect(await answer).toEqual({ waitSeconds: 0, remaining: 4, resetSeconds: 5 })
      expect(errors).toEqual([])
    } finally {
      client.destroy()
      storeSide.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it("never rejects, even when onError and onRecover throw", async () => {
    let down = true
    const limiter = limiterOf(
      () => (down ? Promise.reject(new Error("down")) : Promise.resolve(new RateLimiterRes(4, 1000, 1, true))),
      {
        points: 5,
        pauseAfterErrorMs: 0,
        onError: () => {
          throw new Error("the logger is down too")
        },
        onRecover: () => {
          throw new Error("and still is")
        }
      }
    )
    await expect(limiter.consume("k")).resolves.toBe(0)
    down = false
    await expect(limiter.consume("k")).resolves.toBe(0)
  })

  it("tells onRecover when the store answers in time again, with how long it failed, and applies the shared limit again", async () => {
    let down = true
    const recovered: Array<number> = []
    const store = slowStore(5, 0)
    const limiter = limiterOf((key, count) => (down ? Promise.reject(new Error("down")) : store.consume(key, count)), {
      points: 5,
      pauseAfterErrorMs: 50,
      onRecover: (failedForMs) => recovered.push(failedForMs)
    })
    expect((await quotaOf(limiter, "k")).policyQuota).toBe(5)
    expect(limiter.stats?.().limitingLocally).toBe(true)
    down = false
    // Within the pause the store is not asked: still local.
    expect((await quotaOf(limiter, "k")).policyQuota).toBe(5)
    expect(recovered).toEqual([])
    await sleep(60)
    const shared = await quotaOf(limiter, "k")
    expect(shared.policyQuota).toBeUndefined()
    expect(recovered).toHaveLength(1)
    expect(recovered[0]).toBeGreaterThanOrEqual(50)
    expect(limiter.stats?.().limitingLocally).toBe(false)
  })

  it("counts the concurrent requests of one key with one statement, and asks no more once the window is spent", async () => {
    const store = slowStore(5, 20)
    const limiter = limiterOf(store.consume, { points: 5 })
    const waits = await Promise.all(Array.from({ length: 1000 }, () => limiter.consume("user:burst")))
    expect(passed(waits)).toBe(5)
    // The first request's statement, then one for everything that arrived meanwhile (counted up to the allowance).
    expect(store.statements).toEqual([
      { key: "user:burst", count: 1 },
      { key: "user:burst", count: 5 }
    ])
    for (const wait of waits.filter((wait) => wait > 0)) expect(wait).toBe(5)
    // The store said the window is spent: the next burst is refused here, with what is left of it, and no statement.
    const again = await Promise.all(Array.from({ length: 1000 }, () => quotaOf(limiter, "user:burst")))
    expect(passed(again.map((quota) => quota.waitSeconds))).toBe(0)
    for (const quota of again) expect([quota.remaining, quota.policyQuota]).toEqual([0, undefined])
    expect(store.statements).toHaveLength(2)
    expect(limiter.stats?.().statements).toBe(2)
  })

  it("decides by itself, without failing the store, a request that waited its whole timeout for a busy store's turn", async () => {
    const errors: Array<unknown> = []
    // One statement at a time, each answered in 200 ms: the store is slow, never down.
    const store = slowStore(5, 200)
    const limiter = limiterOf(store.consume, {
      points: 5,
      localCapacity: 1,
      maxInFlight: 1,
      timeoutMs: 500,
      onError: (error) => errors.push(error)
    })
    // On the test's own clock, so that a busy machine's late timers cannot reorder what the case is about.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setImmediate", "performance"] })
    let quotas: ReadonlyArray<RateLimitQuota> = []
    try {
      const all = Promise.all(["user:a", "user:b", "user:c", "user:d"].map((key) => quotaOf(limiter, key)))
      await vi.advanceTimersByTimeAsync(1000)
      quotas = await all
    } finally {
      vi.useRealTimers()
    }
    // a, b and c are sent at 0, 200 and 400 ms, each within its 500 ms; d's turn would come at 600 ms: it is
    // decided in the process, by its own quota (stated), not refused for the others' load.
    expect(quotas.map((quota) => [quota.waitSeconds, quota.policyQuota])).toEqual([
      [0, undefined],
      [0, undefined],
      [0, undefined],
      [0, 1]
    ])
    expect(errors).toEqual([])
    expect(store.statements.map((statement) => statement.key)).toEqual(["user:a", "user:b", "user:c"])
    expect(limiter.stats?.().local.busy).toEqual({ allowed: 1, refused: 0 })
    // Not paused: the next request is counted by the store again.
    expect(await limiter.consume("user:a")).toBe(0)
    expect(store.statements).toHaveLength(4)
  })

  it("decides a new key at once, by itself, past MAX_WAITING_KEYS keys waiting", async () => {
    const store = hungStore()
    const limiter = limiterOf(store.consume, { points: 5, maxInFlight: 1, timeoutMs: 60_000 })
    // The first is sent (and hangs); the next MAX_WAITING_KEYS wait their turn.
    for (let index = 0; index <= MAX_WAITING_KEYS; index++) void limiter.consume(`user:${index}`)
    // At once: settled before the event loop's next turn, with no statement sent and no time-out waited for.
    const pending = Symbol("still pending")
    const settled = await Promise.race([
      quotaOf(limiter, "user:one-too-many"),
      new Promise<typeof pending>((resolve) => setImmediate(() => resolve(pending)))
    ])
    expect(settled).toEqual({ waitSeconds: 0, remaining: 4, resetSeconds: 5, policyQuota: 5 })
    expect(store.statements).toEqual(["user:0"])
  })

  it("decides by itself the requests of a statement the store did not answer in time, and those waiting behind it", async () => {
    const errors: Array<unknown> = []
    const store = hungStore()
    const limiter = limiterOf(store.consume, {
      points: 5,
      maxInFlight: 1,
      timeoutMs: 100,
      pauseAfterErrorMs: 0,
      onError: (error) => errors.push(error)
    })
    const quotas = await Promise.all([quotaOf(limiter, "user:a"), quotaOf(limiter, "user:b")])
    expect(quotas.map((quota) => [quota.waitSeconds, quota.policyQuota])).toEqual([
      [0, 5],
      [0, 5]
    ])
    // One failure: the statement's. The request behind it was decided here because the store had just failed.
    expect(errors).toEqual([expect.any(RateLimitStoreTimeout)])
    expect(store.statements).toEqual(["user:a"])
    expect(limiter.stats?.().local).toEqual({ failed: { allowed: 2, refused: 0 }, busy: { allowed: 0, refused: 0 } })
  })

  it("refuses a local capacity under 1", () => {
    expect(() => limiterOf(hungStore().consume, { points: 5, localCapacity: 0 })).toThrow(/localCapacity/)
  })
})
