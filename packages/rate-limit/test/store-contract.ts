import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { RateLimitStoreTimeout, type ClosableRateLimiter, type SharedLimiterOptions } from "@accord/rate-limit"
import { startBlackHole, startSwitchableProxy, withAddress } from "./helpers.js"

/** The burst case: one credential's concurrent requests, and another credential's during them. */
const BURST = 3000
const BYSTANDER_REQUESTS = 20

/** What a shared case sets on a limiter; the store's own `make` adds its connection and names (schema, key prefix). */
export interface SharedCaseOptions extends Pick<
  SharedLimiterOptions,
  "onError" | "timeoutMs" | "pauseAfterErrorMs" | "localCapacity"
> {
  readonly capacity?: number
  readonly refillPerSecond?: number
}

/** Another address for the limiter: a proxy to the store, or a place where no store answers (a closed port). */
export interface Elsewhere {
  /** The store's URL with this host and port. */
  readonly url: string
  readonly forwardsToStore: boolean
}

export interface SharedLimiterStore {
  /** The describe title: the maker's name. */
  readonly name: string
  /** Why the store's cases skip (see `skipReason`), or undefined when the store answers. */
  readonly skip: string | undefined
  /** The store in test names: "the database", "Redis". */
  readonly store: string
  readonly url: string
  readonly defaultPort: number
  /**
   * "per request" (PostgreSQL's pool): nothing is tried before a request, and onError hears exactly one error per
   * failed request. "persistent" (Redis): the client connects when made, reports a failed connection then, and keeps
   * reconnecting in the background, reporting each attempt, so onError hears more.
   */
  readonly connection: "per request" | "persistent"
  /** A limiter with capacity 5 per 5 s unless told otherwise, closed by `cleanup`. */
  readonly make: (options?: SharedCaseOptions, elsewhere?: Elsewhere) => Promise<ClosableRateLimiter>
  readonly setup?: () => Promise<void>
  /** Closes what `make` opened and removes what the cases stored. */
  readonly cleanup: () => Promise<void>
  /**
   * After the sharing case, which consumed "user:u_1" 8 times and "client:web" once: how the store holds them
   * (`description` goes into the case's name) and the assertions that it does.
   */
  readonly layout: { readonly description: string; readonly expectStored: () => Promise<void> }
}

/**
 * The cases every store limiter shared between processes passes (PostgreSQL, Redis): one allowance for two limiters,
 * and limiting in the process, within its timeout, when the store is unreachable, black-holed, or goes silent. `ownCases`
 * registers the store's own cases in the same describe, after these.
 */
export const describeSharedLimiterStore = (store: SharedLimiterStore, ownCases: () => void = () => {}): void => {
  describe.skipIf(store.skip !== undefined)(
    store.skip === undefined ? store.name : `${store.name} (${store.skip})`,
    () => {
      const { make } = store
      const persistent = store.connection === "persistent"
      const elsewhere = (host: string, port: number, forwardsToStore: boolean): Elsewhere => ({
        url: withAddress(store.url, host, port),
        forwardsToStore
      })

      if (store.setup !== undefined) beforeAll(store.setup)
      afterAll(store.cleanup)

      it(`two limiters, as two processes would have, share one allowance (${store.layout.description})`, async () => {
        const [first, second] = await Promise.all([make(), make()])
        const waits: Array<number> = []
        for (let index = 0; index < 8; index++) waits.push(await (index % 2 === 0 ? first : second).consume("user:u_1"))
        expect(waits.slice(0, 5)).toEqual([0, 0, 0, 0, 0])
        // Refused with the seconds left of the 5 s window that started with the first request.
        expect(Math.min(...waits.slice(5))).toBeGreaterThanOrEqual(4)
        expect(Math.max(...waits.slice(5))).toBeLessThanOrEqual(5)
        expect(await second.consume("client:web")).toBe(0)
        await store.layout.expectStored()
      })

      it(`tells the quota left (the RateLimit headers, docs/api.md "Rate limit"), counted down, then the refusal`, async () => {
        const limiter = await make()
        expect(limiter.policy).toEqual({ quota: 5, windowSeconds: 5 })
        const key = `user:quota_${Math.random().toString(36).slice(2)}`
        const told: Array<unknown> = []
        for (let index = 0; index < 6; index++) {
          const quota = await limiter.consumeQuota?.(key)
          told.push(typeof quota === "number" ? quota : [quota?.waitSeconds, quota?.remaining])
        }
        expect(told).toEqual([
          [0, 4],
          [0, 3],
          [0, 2],
          [0, 1],
          [0, 0],
          [expect.any(Number), 0]
        ])
      })

      it(`limits by itself when ${store.store} is unreachable: each request decided at once, by the process's own quota, onError told, nothing rejects`, async () => {
        const errors: Array<unknown> = []
        // A time-out no request may wait for: each is decided on the refusal itself, never on the time-out.
        const limiter = await make(
          { pauseAfterErrorMs: 0, timeoutMs: 600_000, onError: (error) => errors.push(error) },
          elsewhere("127.0.0.1", 1, false)
        )
        const atStart = errors.length
        if (persistent) expect(String(errors[0])).toMatch(/ECONNREFUSED/)
        else expect(atStart).toBe(0)
        const quotas: Array<unknown> = []
        for (let index = 0; index < 7; index++) {
          const quota = await limiter.consumeQuota?.("user:u_1")
          quotas.push(typeof quota === "number" ? quota : [quota?.waitSeconds === 0, quota?.policyQuota])
        }
        // The whole capacity (the default local capacity: one process), stated, then refusals.
        expect(quotas).toEqual([...Array.from({ length: 5 }, () => [true, 5]), [false, 5], [false, 5]])
        // Each request failed and was reported (pauseAfterErrorMs 0); a persistent client's reconnections add more.
        if (persistent) expect(errors.length).toBeGreaterThanOrEqual(atStart + 7)
        else expect(errors).toHaveLength(7)
        expect(String(errors[0])).toMatch(/ECONNREFUSED/)
        expect(errors.filter((error) => error instanceof RateLimitStoreTimeout)).toEqual([])
        expect(limiter.stats?.().limitingLocally).toBe(true)
      })

      it(`limits by itself within its timeout when ${store.store} accepts connections and never answers`, async () => {
        const blackHole = await startBlackHole()
        const errors: Array<unknown> = []
        let limiter: ClosableRateLimiter | undefined
        try {
          // A persistent client's start waits a bounded time for the first connection (here the handshake times out
          // first); a per-request one tries nothing. Either way it starts: a black hole never answers.
          limiter = await make(
            { timeoutMs: 200, onError: (error) => errors.push(error) },
            elsewhere(blackHole.host, blackHole.port, false)
          )
          const atStart = errors.length
          expect(await limiter.consume("user:u_1")).toBe(0)
          // Redis's client refuses at once while its handshake is unanswered; a pool's request waits for the timeout
          // (the only way a black hole's request is answered at all).
          if (persistent) expect(errors.length).toBeGreaterThanOrEqual(atStart + 1)
          else expect(errors).toEqual([expect.any(RateLimitStoreTimeout)])
        } finally {
          // The black hole first: a pool's close waits for the connection it is still trying there.
          await blackHole.close()
          await limiter?.close()
        }
      })

      it(`limits by itself within its timeout when ${store.store} goes silent after answering`, async () => {
        const proxy = await startSwitchableProxy(store.url, store.defaultPort)
        const errors: Array<unknown> = []
        let limiter: ClosableRateLimiter | undefined
        try {
          limiter = await make(
            { capacity: 1, timeoutMs: 300, onError: (error) => errors.push(error) },
            elsewhere(proxy.host, proxy.port, true)
          )
          expect([await limiter.consume("user:silent"), await limiter.consume("user:silent")]).toEqual([0, 1])
          proxy.blackHole()
          // A window the store said was spent stays refused, without asking it.
          expect(await limiter.consume("user:silent")).toBeGreaterThanOrEqual(1)
          expect(errors).toEqual([])
          // Another credential: decided here because its time-out passed (the silent store never answers), and said so.
          expect(await limiter.consume("user:silent-other")).toBe(0)
          expect(await limiter.consume("user:silent-other")).toBeGreaterThanOrEqual(1)
          expect(errors).toEqual([expect.any(RateLimitStoreTimeout)])
        } finally {
          // The proxy first: a pool's close waits for the query still unanswered behind it.
          await proxy.close()
          await limiter?.close()
        }
      })

      it(`one credential's burst of ${BURST} concurrent requests passes at most its capacity, and does not switch the limit off for another credential`, async () => {
        // docs/operations.md, "Rate limits": a busy store is not a down store. Capacity 5 per 5 s window.
        const errors: Array<unknown> = []
        const limiter = await make({ onError: (error) => errors.push(error) })
        const started = performance.now()
        const burst = Array.from({ length: BURST }, () => limiter.consume("user:burst"))
        // Another credential during the burst: some requests at once, the rest spread over the next second (the
        // time a store failure would leave the limit off for).
        const bystander: Array<Promise<number>> = []
        for (let index = 0; index < BYSTANDER_REQUESTS; index++) {
          if (index >= BYSTANDER_REQUESTS / 2) await new Promise((resolve) => setTimeout(resolve, 100))
          bystander.push(limiter.consume("user:bystander"))
        }
        const [attackerWaits, bystanderWaits] = await Promise.all([Promise.all(burst), Promise.all(bystander)])
        const elapsed = performance.now() - started
        const passed = (waits: ReadonlyArray<number>) => waits.filter((wait) => wait === 0).length
        // At most the capacity per 5 s window used (one, unless the machine is very slow).
        const windows = 1 + Math.floor(elapsed / 5000)
        const counts = `passed: ${passed(attackerWaits)} of the burst, ${passed(bystanderWaits)} of the other credential's`
        for (const waits of [attackerWaits, bystanderWaits]) {
          expect(passed(waits), counts).toBeLessThanOrEqual(5 * windows)
          expect(passed(waits), counts).toBeGreaterThanOrEqual(1)
        }
        // Every refusal says when to come back: within the window.
        for (const wait of [...attackerWaits, ...bystanderWaits]) expect(wait).toBeLessThanOrEqual(5)
        // Nothing failed: the store was busy, never reported down; and the burst cost it a handful of statements
        // (its first request's, then one for the rest, then none: the window was spent), not thousands.
        expect(errors).toEqual([])
        expect(limiter.stats?.().statements).toBeLessThanOrEqual(10)
      })

      ownCases()
    }
  )
}
