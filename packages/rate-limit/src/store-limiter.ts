import type { RateLimiter, RateLimitQuota } from "@accord/core"
import { RateLimiterMemory, RateLimiterRes } from "rate-limiter-flexible"
import { retryAfterSeconds } from "./window.js"

/** A limiter this package built: the core's `RateLimiter`, plus `close()` for what it holds (a pool, a client). */
export interface ClosableRateLimiter extends RateLimiter {
  /** Releases the store's connections; harmless to call twice. The limiter must not be used afterwards. */
  readonly close: () => Promise<void>
  /** A shared limiter's counts so far (metrics); the memory limiter, which has no store, has none. */
  readonly stats?: () => SharedLimiterStats
}

export const DEFAULT_TIMEOUT_MS = 500
export const DEFAULT_PAUSE_AFTER_ERROR_MS = 1000
export const DEFAULT_KEY_PREFIX = "accord:rate-limit"
/** Credentials waiting for a free connection to the store, at most; past it a new one is decided in the process. */
export const MAX_WAITING_KEYS = 1000

/**
 * A store client's own time-out for a statement, given the limiter's: twice it, so that the limiter's (which first
 * reads the I/O that arrived meanwhile) always judges, and the client's only ends a call nobody waits for any more.
 */
export const clientTimeoutMs = (timeoutMs: number): number => 2 * timeoutMs

/** Options of the limiters whose allowance lives outside the process: a cluster's primary, PostgreSQL, Redis. */
export interface SharedLimiterOptions {
  /**
   * Told when the store fails or does not answer in time: this process then limits each credential by itself
   * (`localCapacity`) until the store answers again. A host logs it, preferably at most once in a while. It must not
   * throw (what it throws is dropped).
   */
  readonly onError?: (error: unknown) => void
  /**
   * Told when the store answers in time again after failing, with how long ago it first failed: the shared limit
   * applies again. Must not throw.
   */
  readonly onRecover?: (failedForMs: number) => void
  /**
   * The longest a request waits, default 500 ms. A statement the store has not answered this long after it was sent
   * means the store failed (`onError`); a request still waiting for its turn this long (the store busy with other
   * statements) means it is slow. Either way the request is decided in the process, by `localCapacity`.
   */
  readonly timeoutMs?: number
  /**
   * After a failure the store is left alone this long, default 1000 ms: requests are decided in the process at once
   * rather than each waiting for a store that is down. 0 asks it every time.
   */
  readonly pauseAfterErrorMs?: number
  /** Prefix of the keys (Redis keys, PostgreSQL rows, the cluster primary's limiter), default `accord:rate-limit`. */
  readonly keyPrefix?: string
  /**
   * The requests per window this process allows a credential by itself while the store fails or is slow, counting
   * those the store allowed it in that window; default the whole capacity (right for one process). With W processes
   * sharing one store, `max(1, floor(capacity / W))` keeps their sum at the capacity.
   */
  readonly localCapacity?: number
}

/** What a shared limiter decided and asked, since it was made: read by the server's metrics. */
export interface SharedLimiterStats {
  /** The store's last outcome was a failure: this process limits each credential by itself until it answers. */
  readonly limitingLocally: boolean
  /** Statements sent to the store (each counts every request of one credential that waited for it). */
  readonly statements: number
  /** Failures of the store: errors, and statements unanswered after `timeoutMs`. */
  readonly storeFailures: number
  /** Requests decided in the process, by why (the store failed, or was too slow to give them a turn) and outcome. */
  readonly local: Readonly<Record<LocalReason, { readonly allowed: number; readonly refused: number }>>
}

export type LocalReason = "failed" | "busy"

/** The store did not answer within `timeoutMs`: what `onError` gets for a hung store. */
export class RateLimitStoreTimeout extends Error {
  override readonly name = "RateLimitStoreTimeout"
  constructor(readonly timeoutMs: number) {
    super(`the rate limit store did not answer within ${timeoutMs} ms`)
  }
}

/** A host's callback, called so that whatever it throws is dropped: the host's reporter failing must not fail a request. */
export const reporter =
  <A extends ReadonlyArray<unknown>>(callback: ((...args: A) => void) | undefined) =>
  (...args: A): void => {
    try {
      callback?.(...args)
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
  /** The window in seconds (`fixedWindowFor`'s durationSeconds). */
  readonly windowSeconds: number
  /** Statements in flight at once, default unbounded: a pool's size, so that none waits inside the pool. */
  readonly maxInFlight?: number
}

type Outcome = RateLimitQuota | Promise<RateLimitQuota>

interface Waiter {
  readonly answer: (outcome: Outcome) => void
  answered: boolean
}

/** The requests of one key counted by one statement. */
interface Batch {
  readonly waiters: Array<Waiter>
  /** Set once the statement is sent; its own timer then judges the store. */
  sent: boolean
  /** The statement was not answered within timeoutMs: its requests were decided in the process. */
  timedOut: boolean
  /** Of its requests, those the process allowed by itself (after a time-out or an error). */
  allowedLocally: number
}

/** Requests a process allowed by itself that the store has not counted yet, and when their window ends. */
interface Owed {
  readonly points: number
  readonly until: number
}

/** A key's statement in flight (at most one a process), and the requests that arrived meanwhile. */
interface KeyState {
  inFlight: Batch | undefined
  next: Batch | undefined
}

/** Whole seconds until a window ends (0 once it has). */
const resetSecondsOf = (msBeforeNext: number): number => Math.max(0, Math.ceil(msBeforeNext / 1000))

/**
 * A store limiter's `consume` as the core's never-rejecting one, bounded in time, that limits in the process when
 * the store fails or is slow, never opens, and never lets one credential's burst load the store
 * (docs/operations.md, "Rate limits"):
 *
 * - **One statement per key at a time.** Requests of a key that arrive while its statement is in flight wait for it,
 *   and are then counted together by one statement (`consume(key, n)`; n is capped at the allowance, which changes
 *   no answer): the first requests the store still had room for pass, the others are refused with the window's
 *   Retry-After.
 * - **A spent window is not asked again.** Once the store says a key's window is spent, the key's requests are
 *   refused in the process until that window ends (what the store would answer), without a statement: a burst costs
 *   the store two statements per window.
 * - **Bounded in flight and waiting.** At most `maxInFlight` statements are sent at once, so none waits inside a
 *   pool; keys beyond wait their turn, at most `MAX_WAITING_KEYS` of them.
 * - **Limited locally, never open.** A statement unanswered `timeoutMs` after it was sent, or a store error, is a
 *   failure: `onError` is told, the store is left alone for `pauseAfterErrorMs`, and requests are decided by a
 *   limiter in this process (rate-limiter-flexible's memory limiter, as its `insuranceLimiter`) allowing each key
 *   `localCapacity` per window, the requests the store allowed this process in that window included (each is counted
 *   there too). So is a request that waited `timeoutMs` for its turn, or found the waiting line full: the store is
 *   slow. The first answer in time after a failure tells `onRecover`.
 */
export const storeLimiter = (
  consume: StoreConsume,
  options: StoreLimiterOptions
): Pick<ClosableRateLimiter, "consume" | "consumeQuota" | "policy" | "stats"> => {
  const { points, windowSeconds } = options
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const pauseMs = options.pauseAfterErrorMs ?? DEFAULT_PAUSE_AFTER_ERROR_MS
  const maxInFlight = options.maxInFlight ?? Number.POSITIVE_INFINITY
  const localCapacity = options.localCapacity ?? points
  if (!Number.isInteger(localCapacity) || localCapacity < 1) {
    throw new RangeError(`localCapacity must be an integer of at least 1, got ${localCapacity}`)
  }
  const onError = reporter(options.onError)
  const onRecover = reporter(options.onRecover)
  const local = new RateLimiterMemory({ points: localCapacity, duration: windowSeconds })
  const keys = new Map<string, KeyState>()
  /** Keys whose window the store said is spent, and when that window ends (performance.now()). */
  const spent = new Map<string, number>()
  /** Per key, the requests this process allowed by itself: added to the key's next statement, so the store knows. */
  const owed = new Map<string, Owed>()
  /** Keys whose next batch waits for a free statement slot, in order of arrival. */
  const waiting: Array<string> = []
  let inFlight = 0
  let pausedUntil = 0
  /** When the store's outcomes started being failures (performance.now()); undefined while it answers. */
  let failingSince: number | undefined
  let statements = 0
  let storeFailures = 0
  const localTally = { failed: { allowed: 0, refused: 0 }, busy: { allowed: 0, refused: 0 } }

  const paused = (): boolean => pausedUntil > 0 && performance.now() < pausedUntil
  const report = (error: unknown): void => {
    const now = performance.now()
    failingSince ??= now
    storeFailures += 1
    pausedUntil = now + pauseMs
    onError(error)
  }

  /** Adds `points` to what `key` owes the store, until `until` (performance.now()), when its window ends. */
  const owe = (key: string, points: number, until: number): void => {
    const now = performance.now()
    if (points <= 0 || until <= now) return
    const entry = owed.get(key)
    if (entry !== undefined && entry.until > now) {
      owed.set(key, { points: entry.points + points, until: entry.until })
      return
    }
    owed.set(key, { points, until })
    // Forgotten when the window ends (the store's own has ended too), unless a later window replaced it.
    setTimeout(() => owed.get(key)?.until === until && owed.delete(key), until - now).unref()
  }
  /** What `key` owes the store, taken to be added to a statement (and given back with `owe` if it fails). */
  const takeOwed = (key: string): Owed | undefined => {
    const entry = owed.get(key)
    if (entry === undefined) return undefined
    owed.delete(key)
    return entry.until > performance.now() ? entry : undefined
  }
  /** The store has counted `points` of what `key` owed (a late answer): no longer owed. */
  const settleOwed = (key: string, points: number): void => {
    const entry = owed.get(key)
    if (entry === undefined || points <= 0) return
    if (entry.points <= points) owed.delete(key)
    else owed.set(key, { points: entry.points - points, until: entry.until })
  }

  /**
   * One request decided by this process's own limit; the memory limiter counts synchronously, in call order. What it
   * allows is owed to the store, and counted in `batch` (the statement the request waited for) when there is one.
   */
  const decideLocally = (key: string, reason: LocalReason, batch?: Batch): Promise<RateLimitQuota> => {
    const tally = localTally[reason]
    return local.consume(key).then(
      (res): RateLimitQuota => {
        tally.allowed += 1
        owe(key, 1, performance.now() + res.msBeforeNext)
        if (batch !== undefined) batch.allowedLocally += 1
        return {
          waitSeconds: 0,
          remaining: res.remainingPoints,
          resetSeconds: resetSecondsOf(res.msBeforeNext),
          policyQuota: localCapacity
        }
      },
      (rejection: unknown): RateLimitQuota => {
        tally.refused += 1
        const msBeforeNext = rejection instanceof RateLimiterRes ? rejection.msBeforeNext : windowSeconds * 1000
        return {
          waitSeconds: retryAfterSeconds(msBeforeNext),
          remaining: 0,
          resetSeconds: resetSecondsOf(msBeforeNext),
          policyQuota: localCapacity
        }
      }
    )
  }
  const reasonNow = (): LocalReason => (failingSince === undefined ? "busy" : "failed")

  const answer = (waiter: Waiter, outcome: Outcome): void => {
    if (waiter.answered) return
    waiter.answered = true
    waiter.answer(outcome)
  }
  const pendingOf = (batch: Batch): Array<Waiter> => batch.waiters.filter((waiter) => !waiter.answered)
  const answerLocally = (key: string, batch: Batch, reason: LocalReason): void => {
    for (const waiter of pendingOf(batch)) answer(waiter, decideLocally(key, reason, batch))
  }

  /** The store said `key`'s window is spent for `msBeforeNext` more: its requests are refused here until then. */
  const markSpent = (key: string, msBeforeNext: number): void => {
    const now = performance.now()
    if (msBeforeNext <= 0 || (spent.get(key) ?? 0) > now) return
    const until = now + msBeforeNext
    spent.set(key, until)
    // Forgotten when the window ends, unless a later window replaced it.
    setTimeout(() => spent.get(key) === until && spent.delete(key), msBeforeNext).unref()
  }
  const spentRefusal = (key: string): RateLimitQuota | undefined => {
    const until = spent.get(key)
    if (until === undefined) return undefined
    const msBeforeNext = until - performance.now()
    if (msBeforeNext <= 0) {
      spent.delete(key)
      return undefined
    }
    return { waitSeconds: retryAfterSeconds(msBeforeNext), remaining: 0, resetSeconds: resetSecondsOf(msBeforeNext) }
  }

  const afterStatement = (key: string, state: KeyState): void => {
    state.inFlight = undefined
    if (state.next !== undefined) waiting.push(key)
    else keys.delete(key)
    pump()
  }

  const send = (key: string, state: KeyState, batch: Batch): void => {
    const pending = pendingOf(batch)
    inFlight += 1
    statements += 1
    state.inFlight = batch
    batch.sent = true
    const counted = Math.min(pending.length, points)
    // What this process allowed by itself while the store failed goes with it: the store then knows the window's count.
    const carried = takeOwed(key)
    const carriedPoints = carried?.points ?? 0
    const giveBack = () => carried !== undefined && owe(key, carried.points, carried.until)
    let settled = false
    const timer = setTimeout(
      () =>
        // Judged after this turn's I/O: an answer that came while the event loop was busy (a burst being parsed)
        // is read first, so a loaded process does not take its own lateness for a slow store.
        setImmediate(() => {
          if (settled) return
          batch.timedOut = true
          giveBack()
          report(new RateLimitStoreTimeout(timeoutMs))
          answerLocally(key, batch, "failed")
        }),
      timeoutMs
    )
    const settle = (outcome: unknown, allowed: boolean): void => {
      settled = true
      clearTimeout(timer)
      // The slot is freed only now: a statement that timed out still holds its connection until the store answers.
      inFlight -= 1
      if (outcome instanceof RateLimiterRes) {
        // Late or not, the store counted these requests: a spent window stays spent.
        if (outcome.consumedPoints >= points) markSpent(key, outcome.msBeforeNext)
        // Late, it counted what the statement carried (given back at the time-out) and the requests this process
        // then allowed by itself: no longer owed.
        if (batch.timedOut) settleOwed(key, carriedPoints + batch.allowedLocally)
        else {
          if (failingSince !== undefined) {
            const failedForMs = performance.now() - failingSince
            failingSince = undefined
            onRecover(failedForMs)
          }
          // The window's count before these requests (what was carried included: those were served), hence the room
          // it had for them (first come first).
          const before = outcome.consumedPoints - counted
          let room = allowed ? counted : Math.max(0, Math.min(counted, points - before))
          const resetSeconds = resetSecondsOf(outcome.msBeforeNext)
          const refused: RateLimitQuota = {
            waitSeconds: retryAfterSeconds(outcome.msBeforeNext),
            remaining: 0,
            resetSeconds
          }
          let taken = before
          let passed = 0
          for (const waiter of pendingOf(batch)) {
            if (room > 0) {
              taken += 1
              passed += 1
              answer(waiter, { waitSeconds: 0, remaining: Math.max(0, points - taken), resetSeconds })
            } else answer(waiter, refused)
            room -= 1
          }
          // This process's own count of what it passed: what it limits by if the store fails in this window.
          if (passed > 0) void local.penalty(key, passed)
        }
      } else if (!batch.timedOut) {
        giveBack()
        report(outcome)
        answerLocally(key, batch, "failed")
      }
      afterStatement(key, state)
    }
    let statement: Promise<unknown>
    try {
      statement = consume(key, counted + carriedPoints)
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
      const refusal = spentRefusal(key)
      if (refusal !== undefined) {
        for (const waiter of batch.waiters) answer(waiter, refusal)
      } else if (paused()) answerLocally(key, batch, "failed")
      if (pendingOf(batch).length === 0) {
        if (state.inFlight === undefined) keys.delete(key)
      } else send(key, state, batch)
    }
  }

  const consumeQuota = (key: string): Promise<RateLimitQuota> => {
    const refusal = spentRefusal(key)
    if (refusal !== undefined) return Promise.resolve(refusal)
    if (paused()) return decideLocally(key, "failed")
    let state = keys.get(key)
    // A key that would join the waiting line behind MAX_WAITING_KEYS others: decided here at once. A key with a
    // statement in flight waits for that one instead.
    const joinsLine = state === undefined || (state.next === undefined && state.inFlight === undefined)
    if (joinsLine && waiting.length >= MAX_WAITING_KEYS) return decideLocally(key, reasonNow())
    return new Promise<RateLimitQuota>((resolve) => {
      if (state === undefined) {
        state = { inFlight: undefined, next: undefined }
        keys.set(key, state)
      }
      let batch = state.next
      if (batch === undefined) {
        batch = { waiters: [], sent: false, timedOut: false, allowedLocally: 0 }
        state.next = batch
        if (state.inFlight === undefined) waiting.push(key)
      }
      const waiterBatch = batch
      const timer = setTimeout(
        () =>
          // Its own time is up (after this turn's I/O, as for a statement). Sent: the statement's timer judges the
          // store (it started later). Not sent: the store is too slow to give it a turn; this process decides.
          setImmediate(() => {
            if (!waiterBatch.sent && !waiter.answered) answer(waiter, decideLocally(key, reasonNow()))
          }),
        timeoutMs
      )
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
    consume: (key) => consumeQuota(key).then((outcome) => outcome.waitSeconds),
    consumeQuota,
    policy: { quota: points, windowSeconds },
    stats: () => ({
      limitingLocally: failingSince !== undefined,
      statements,
      storeFailures,
      local: { failed: { ...localTally.failed }, busy: { ...localTally.busy } }
    })
  }
}
