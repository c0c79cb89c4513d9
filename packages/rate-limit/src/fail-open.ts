import type { RateLimiter, RateLimitQuota } from "@accord/core"
import { RateLimiterRes } from "rate-limiter-flexible"
import { retryAfterSeconds } from "./window.js"

/** A limiter this package built: the core's `RateLimiter`, plus `close()` for what it holds (a pool, a client). */
export interface ClosableRateLimiter extends RateLimiter {
  /** Releases the store's connections; harmless to call twice. The limiter must not be used afterwards. */
  readonly close: () => Promise<void>
}

export const DEFAULT_TIMEOUT_MS = 500
export const DEFAULT_PAUSE_AFTER_ERROR_MS = 1000
export const DEFAULT_KEY_PREFIX = "accord:rate-limit"
/** Credentials waiting for a free connection to the store, at most; past it a new one is refused (busy). */
export const MAX_WAITING_KEYS = 1000
/** Retry-After of a request refused because the store was busy: the queue is gone within a second. */
export const BUSY_RETRY_AFTER_SECONDS = 1

/** Options of the limiters whose allowance lives outside the process: a cluster's primary, PostgreSQL, Redis. */
export interface SharedLimiterOptions {
  /**
   * Told when the store fails or does not answer in time. The request is served all the same (fail open); a host
   * logs it, preferably at most once in a while. It must not throw (what it throws is dropped).
   */
  readonly onError?: (error: unknown) => void
  /**
   * The longest a request waits, default 500 ms. A statement the store has not answered this long after it was sent
   * means the store failed: its requests are served and `onError` told. A request still waiting for its turn (the
   * store busy with other statements) is refused instead (429, Retry-After 1): a busy store is not a down one.
   */
  readonly timeoutMs?: number
  /**
   * After a failure the store is left alone this long, default 1000 ms: requests are served at once rather than each
   * waiting for a store that is down. 0 asks it every time.
   */
  readonly pauseAfterErrorMs?: number
  /** Prefix of the keys (Redis keys, PostgreSQL rows, the cluster primary's limiter), default `accord:rate-limit`. */
  readonly keyPrefix?: string
}

/** The store did not answer within `timeoutMs`: what `onError` gets for a hung store. */
export class RateLimitStoreTimeout extends Error {
  override readonly name = "RateLimitStoreTimeout"
  constructor(readonly timeoutMs: number) {
    super(`the rate limit store did not answer within ${timeoutMs} ms`)
  }
}

const ALLOWED: Promise<number> = Promise.resolve(0)

/** `onError`, called so that whatever it throws is dropped: the host's reporter failing must not fail a request. */
export const reporter =
  (onError: SharedLimiterOptions["onError"]) =>
  (error: unknown): void => {
    try {
      onError?.(error)
    } catch {
      // Dropped: see above.
    }
  }

/**
 * rate-limiter-flexible's `consume(key, points)`: resolves (within the allowance) or rejects with a RateLimiterRes
 * whose `consumedPoints` is the window's count including these points; rejects with anything else when the store failed.
 */
export type StoreConsume = (key: string, points: number) => Promise<unknown>

export interface StoreLimiterOptions extends SharedLimiterOptions {
  /** The window's allowance (`fixedWindowFor`'s points). */
  readonly points: number
  /** The window in seconds (`fixedWindowFor`'s durationSeconds): with it, the limiter tells its quota (`consumeQuota`). */
  readonly windowSeconds?: number
  /** Statements in flight at once, default unbounded: a pool's size, so that none waits inside the pool. */
  readonly maxInFlight?: number
}

interface Waiter {
  /** A bare number: no quota known (served while failing, refused while busy). */
  readonly answer: (outcome: RateLimitQuota | number) => void
  answered: boolean
}

/** The requests of one key counted by one statement. */
interface Batch {
  readonly waiters: Array<Waiter>
  /** Set once the statement is sent; its own timer then judges the store. */
  sent: boolean
  /** The statement was not answered within timeoutMs: its requests were served, its late answer is dropped. */
  timedOut: boolean
}

/** A key's statement in flight (at most one a process), and the requests that arrived meanwhile. */
interface KeyState {
  inFlight: Batch | undefined
  next: Batch | undefined
}

/**
 * A store limiter's `consume` as the core's never-rejecting one, bounded in time, failing open when the store is
 * down and never because a client is busy (docs/operations.md, "Rate limits"):
 *
 * - **One statement per key at a time.** Requests of a key that arrive while its statement is in flight wait for it,
 *   and are then counted together by one statement (`consume(key, n)`; n is capped at the allowance, which changes
 *   no answer): the first requests the store still had room for pass, the others are refused with the window's
 *   Retry-After. A burst of one credential costs the store two statements, not thousands.
 * - **Bounded in flight and waiting.** At most `maxInFlight` statements are sent at once, so none waits inside a
 *   pool; keys beyond wait their turn, at most `MAX_WAITING_KEYS` of them.
 * - **Busy is not down.** A request whose statement has not been sent when its `timeoutMs` has passed, or that finds
 *   the waiting line full, is refused (Retry-After 1) unless the store's last answer was a failure. Only a statement
 *   sent and unanswered for `timeoutMs`, or a store error, counts as a failure: then the requests are served,
 *   `onError` is told, and the store is left alone for `pauseAfterErrorMs`.
 */
export const failOpen = (consume: StoreConsume, options: StoreLimiterOptions): RateLimiter => {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const pauseMs = options.pauseAfterErrorMs ?? DEFAULT_PAUSE_AFTER_ERROR_MS
  const maxInFlight = options.maxInFlight ?? Number.POSITIVE_INFINITY
  const onError = reporter(options.onError)
  const keys = new Map<string, KeyState>()
  /** Keys whose next batch waits for a free statement slot, in order of arrival. */
  const waiting: Array<string> = []
  let inFlight = 0
  let pausedUntil = 0
  /** The store's last outcome was a failure: requests that outwait their turn are served, not refused. */
  let failing = false

  const paused = (): boolean => pausedUntil > 0 && performance.now() < pausedUntil
  const report = (error: unknown): void => {
    failing = true
    pausedUntil = performance.now() + pauseMs
    onError(error)
  }
  const answer = (waiter: Waiter, outcome: RateLimitQuota | number): void => {
    if (waiter.answered) return
    waiter.answered = true
    waiter.answer(outcome)
  }
  const pendingOf = (batch: Batch): Array<Waiter> => batch.waiters.filter((waiter) => !waiter.answered)

  const afterStatement = (key: string, state: KeyState): void => {
    state.inFlight = undefined
    if (state.next !== undefined) waiting.push(key)
    else keys.delete(key)
    pump()
  }

  const send = (key: string, state: KeyState, batch: Batch): void => {
    const pending = pendingOf(batch)
    inFlight += 1
    state.inFlight = batch
    batch.sent = true
    const counted = Math.min(pending.length, options.points)
    const timer = setTimeout(() => {
      batch.timedOut = true
      report(new RateLimitStoreTimeout(timeoutMs))
      for (const waiter of batch.waiters) answer(waiter, 0)
    }, timeoutMs)
    const settle = (outcome: unknown, allowed: boolean): void => {
      clearTimeout(timer)
      // The slot is freed only now: a statement that timed out still holds its connection until the store answers.
      inFlight -= 1
      if (!batch.timedOut) {
        if (outcome instanceof RateLimiterRes) {
          failing = false
          // The window's count before this statement, hence the room it had for these requests (first come first).
          const before = outcome.consumedPoints - counted
          let room = allowed ? counted : Math.max(0, Math.min(counted, options.points - before))
          const retryAfter = retryAfterSeconds(outcome.msBeforeNext)
          const resetSeconds = Math.max(0, Math.ceil(outcome.msBeforeNext / 1000))
          let taken = before
          for (const waiter of pendingOf(batch)) {
            if (room > 0) taken += 1
            answer(
              waiter,
              room > 0
                ? { waitSeconds: 0, remaining: Math.max(0, options.points - taken), resetSeconds }
                : { waitSeconds: retryAfter, remaining: 0, resetSeconds }
            )
            room -= 1
          }
        } else {
          report(outcome)
          for (const waiter of batch.waiters) answer(waiter, 0)
        }
      }
      afterStatement(key, state)
    }
    let statement: Promise<unknown>
    try {
      statement = consume(key, counted)
    } catch (error) {
      statement = Promise.reject(error)
    }
    statement.then(
      (result) => settle(result, true),
      (rejection: unknown) => settle(rejection, false)
    )
  }

  /** Sends the waiting keys' batches while slots are free. */
  const pump = (): void => {
    while (inFlight < maxInFlight && waiting.length > 0) {
      const key = waiting.shift() as string
      const state = keys.get(key)
      const batch = state?.next
      if (state === undefined || batch === undefined) continue
      state.next = undefined
      if (paused()) {
        for (const waiter of batch.waiters) answer(waiter, 0)
        if (state.inFlight === undefined) keys.delete(key)
      } else if (pendingOf(batch).length === 0) {
        if (state.inFlight === undefined) keys.delete(key)
      } else {
        send(key, state, batch)
      }
    }
  }

  const consumeQuota = (key: string): Promise<RateLimitQuota | number> => {
    if (paused()) return ALLOWED
    let state = keys.get(key)
    // A key that would join the waiting line behind MAX_WAITING_KEYS others: refused (or served, the store
    // failing) at once. A key with a statement in flight waits for that one instead.
    const joinsLine = state === undefined || (state.next === undefined && state.inFlight === undefined)
    if (joinsLine && waiting.length >= MAX_WAITING_KEYS) {
      return Promise.resolve(failing ? 0 : BUSY_RETRY_AFTER_SECONDS)
    }
    return new Promise<RateLimitQuota | number>((resolve) => {
      if (state === undefined) {
        state = { inFlight: undefined, next: undefined }
        keys.set(key, state)
      }
      let batch = state.next
      if (batch === undefined) {
        batch = { waiters: [], sent: false, timedOut: false }
        state.next = batch
        if (state.inFlight === undefined) waiting.push(key)
      }
      const waiterBatch = batch
      const timer = setTimeout(() => {
        // Its own time is up. Sent: the statement's timer judges the store (it started later). Not sent: the
        // store is busy with other statements, which is not a reason to lift the limit.
        if (!waiterBatch.sent) answer(waiter, failing ? 0 : BUSY_RETRY_AFTER_SECONDS)
      }, timeoutMs)
      const waiter: Waiter = {
        answer: (outcome) => {
          clearTimeout(timer)
          resolve(outcome)
        },
        answered: false
      }
      batch.waiters.push(waiter)
      pump()
    })
  }

  return {
    consume: (key) =>
      consumeQuota(key).then((outcome) => (typeof outcome === "number" ? outcome : outcome.waitSeconds)),
    ...(options.windowSeconds !== undefined && {
      consumeQuota,
      policy: { quota: options.points, windowSeconds: options.windowSeconds }
    })
  }
}
