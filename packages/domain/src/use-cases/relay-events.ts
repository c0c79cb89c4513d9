import { Cause, Effect, Random } from "effect"
import type { Unavailable } from "../errors.js"
import { EventStore, type PendingDelivery, type Settlement } from "../ports/event-store.js"
import type { DeliveryFailed, EventSink } from "../ports/event-sink.js"
import { now } from "./now.js"

/**
 * Exponential back-off with jitter (docs/operations.md, "Events"): after the n-th failed attempt, wait
 * `min(maxMillis, baseMillis * 2^(n-1))`, scaled by a random factor in [0.5, 1) so that deliverers that failed
 * together do not retry together.
 */
export const exponentialBackoff =
  (options: { readonly baseMillis?: number; readonly maxMillis?: number } = {}) =>
  (attempts: number): Effect.Effect<number> =>
    Effect.map(Random.next, (random) => {
      const ceiling = Math.min(options.maxMillis ?? 3_600_000, (options.baseMillis ?? 1_000) * 2 ** (attempts - 1))
      return Math.round(ceiling * (0.5 + random / 2))
    })

/** What a relay tells its host (metrics, logs). Each is optional; one that fails is logged with Effect's logger. */
export interface RelayObserver {
  /** Each attempt's outcome, once the store has it; `failure` is the sink's refusal. */
  readonly settled?: (
    delivery: PendingDelivery,
    settlement: Settlement,
    failure: DeliveryFailed | undefined
  ) => Effect.Effect<void>
  /** A sink's delivery loop runs: at the start, and again after each restart (`restarts` so far). */
  readonly started?: (sink: string, restarts: number) => Effect.Effect<void>
  /**
   * A sink's delivery loop ended on a defect (a bug: an outage of the store or the sink is retried, never this) and
   * restarts after `restartInMillis`. Absent: logged at error level with Effect's logger.
   */
  readonly died?: (sink: string, cause: Cause.Cause<unknown>, restartInMillis: number) => Effect.Effect<void>
  /** A sink said it is gone for good (`DeliveryFailed.gone`): this relay attempts it no more. */
  readonly gone?: (sink: string, reason: string) => Effect.Effect<void>
}

/** How one relay delivers (docs/operations.md, "Events"); every field but `sinks` has a default. */
export interface RelayOptions {
  /** Each with a name of its own: the store keeps each sink's progress by it. */
  readonly sinks: ReadonlyArray<EventSink>
  /** Milliseconds to wait after `attempts` failed attempts. Default `exponentialBackoff()` (1 s doubling to 1 h). */
  readonly backoff?: (attempts: number) => Effect.Effect<number>
  /** A delivery still not made this long after its event was recorded (or replayed) is given up. Default 3 days. */
  readonly giveUpAfterMillis?: number
  /** Deliveries claimed at a time, per sink. Default 100. */
  readonly batchSize?: number
  /** Deliveries attempted at once, per sink. Default 8. */
  readonly concurrency?: number
  /**
   * How long a claimed delivery is this relay's before another deliverer may take it. Default: twice the sink's
   * `attemptTimeoutMillis` plus a second, or 5 minutes for a sink that states none.
   */
  readonly leaseMillis?: number
  /** The wait between two looks at the store when nothing is due. Default 1 s. */
  readonly pollMillis?: number
  /** The longest wait a sink's `retryAfterMillis` imposes (a longer one is cut to it). Default 1 hour. */
  readonly maxRetryAfterMillis?: number
  /** How often the pending deliveries of sinks this relay does not have are moved to its own. Default 10 minutes. */
  readonly retargetMillis?: number
  /** The wait before restarting a sink's loop after its n-th defect in a row. Default 1 s doubling to 1 minute. */
  readonly restartBackoff?: (defects: number) => number
  readonly observer?: RelayObserver
}

const DAY = 86_400_000
/** Events dispatched (given their per-sink deliveries) by one statement. */
const DISPATCH_BATCH = 100
/** A loop that ran this long before its defect starts its restart back-off again from the first step. */
const STABLE_RUN_MILLIS = 60_000

const defaultRestartBackoff = (defects: number): number => Math.min(60_000, 1_000 * 2 ** (defects - 1))

/** What one relay knows of a sink between attempts (this process only). */
interface SinkState {
  /** Epoch milliseconds before which the sink is not attempted: its last `Retry-After`. */
  pausedUntil: number
  /** It said it is gone: not attempted again. */
  gone: boolean
}

const newSinkState = (): SinkState => ({ pausedUntil: 0, gone: false })

/** What a relay's sinks share. */
interface SharedState {
  /** Epoch milliseconds: when one of the loops next moves the deliveries of sinks this relay does not have. */
  retargetAt: number
}

/** An observer's call: its own failure is logged, never the relay's end. */
const observe = (call: Effect.Effect<void> | undefined): Effect.Effect<void> =>
  call === undefined
    ? Effect.void
    : Effect.catchCause(call, (cause) =>
        Cause.hasInterrupts(cause) ? Effect.failCause(cause) : Effect.logError("event relay observer failed", cause)
      )

const leaseOf = (options: RelayOptions, sink: EventSink): number =>
  options.leaseMillis ?? (sink.attemptTimeoutMillis === undefined ? 300_000 : 2 * sink.attemptTimeoutMillis + 1_000)

/** One attempt at one delivery, then what it leaves, recorded. */
const attempt = (options: RelayOptions, sink: EventSink, state: SinkState, delivery: PendingDelivery) =>
  Effect.gen(function* () {
    const outcome = yield* Effect.result(sink.deliver(delivery.recorded))
    const at = (yield* now).getTime()
    const attempts = delivery.attempts + 1
    let settlement: Settlement
    let failure: DeliveryFailed | undefined
    if (outcome._tag === "Success") {
      settlement = { status: "delivered", attempts, nextAttemptAt: undefined }
    } else {
      failure = outcome.failure
      const retryAfter = Math.min(options.maxRetryAfterMillis ?? 3_600_000, Math.max(0, failure.retryAfterMillis ?? 0))
      // The sink's own word on when to come back holds for every one of its events, not only this one.
      if (retryAfter > 0) state.pausedUntil = Math.max(state.pausedUntil, at + retryAfter)
      if (failure.gone === true && !state.gone) {
        state.gone = true
        yield* observe(options.observer?.gone?.(sink.name, failure.reason))
      }
      settlement =
        at - delivery.since.getTime() >= (options.giveUpAfterMillis ?? 3 * DAY)
          ? { status: "failed", attempts, nextAttemptAt: undefined }
          : {
              status: "pending",
              attempts,
              nextAttemptAt: new Date(
                at + Math.max(retryAfter, yield* (options.backoff ?? exponentialBackoff())(attempts))
              )
            }
    }
    const events = yield* EventStore
    yield* events.settle(delivery.recorded.id, sink.name, settlement)
    yield* observe(options.observer?.settled?.(delivery, settlement, failure))
  })

/**
 * Dispatches what was recorded since, then claims `sink`'s due deliveries and attempts each once; how many. When it
 * is time (`shared`), first moves the pending deliveries of sinks the relay does not have to its own
 * (`EventStore.retarget`): at start, so that a changed configuration (a removed sink, an endpoint whose URL changed)
 * loses nothing, then every `retargetMillis`, for what processes still running the old one dispatched meanwhile.
 */
const sinkPass = (
  options: RelayOptions,
  sink: EventSink,
  state: SinkState,
  shared?: SharedState
): Effect.Effect<number, Unavailable, EventStore> =>
  Effect.gen(function* () {
    const events = yield* EventStore
    const names = options.sinks.map((each) => each.name)
    const at = yield* now
    if (shared !== undefined && at.getTime() >= shared.retargetAt) {
      shared.retargetAt = at.getTime() + (options.retargetMillis ?? 600_000)
      yield* events.retarget(names)
    }
    yield* events.dispatch(names, DISPATCH_BATCH)
    if (state.gone) return 0
    const due = yield* events.claimDue(
      sink.name,
      at,
      new Date(at.getTime() + leaseOf(options, sink)),
      options.batchSize ?? 100
    )
    yield* Effect.forEach(due, (delivery) => attempt(options, sink, state, delivery), {
      concurrency: options.concurrency ?? 8,
      discard: true
    })
    return due.length
  })

/**
 * One pass over what is due, every sink at once: dispatches the events recorded since the last pass, then claims and
 * attempts each sink's due deliveries once; how many it attempted (0: nothing was due). It does not move the
 * deliveries of sinks it does not have (`relayEvents` does): a host whose sinks changed calls `EventStore.retarget`.
 */
export const relayOnce = (options: RelayOptions): Effect.Effect<number, Unavailable, EventStore> =>
  Effect.map(
    Effect.forEach(options.sinks, (sink) => sinkPass(options, sink, newSinkState()), { concurrency: "unbounded" }),
    (counts) => counts.reduce((sum, count) => sum + count, 0)
  )

/** A sink's deliveries until interrupted: a store that cannot serve is waited for, like one with nothing due. */
const sinkLoop = (
  options: RelayOptions,
  sink: EventSink,
  state: SinkState,
  shared: SharedState
): Effect.Effect<never, never, EventStore> =>
  Effect.forever(
    Effect.gen(function* () {
      const wait = state.pausedUntil - (yield* now).getTime()
      if (wait > 0) return yield* Effect.sleep(wait)
      const attempted = yield* Effect.orElseSucceed(sinkPass(options, sink, state, shared), () => 0)
      if (attempted === 0) yield* Effect.sleep(options.pollMillis ?? 1_000)
    })
  )

/**
 * `sink`'s loop, restarted after a defect with back-off, each end and start told to the observer: a loop never
 * stops unseen. Its claims of the moment are taken again when they end.
 */
const supervised = (
  options: RelayOptions,
  sink: EventSink,
  shared: SharedState
): Effect.Effect<never, never, EventStore> =>
  Effect.gen(function* () {
    const state = newSinkState()
    const restartBackoff = options.restartBackoff ?? defaultRestartBackoff
    let restarts = 0
    let defectsInRow = 0
    for (;;) {
      yield* observe(options.observer?.started?.(sink.name, restarts))
      const startedAt = (yield* now).getTime()
      const cause = yield* Effect.catchCause(sinkLoop(options, sink, state, shared), (cause) =>
        Cause.hasInterrupts(cause) ? Effect.failCause(cause) : Effect.succeed(cause)
      )
      restarts += 1
      defectsInRow = (yield* now).getTime() - startedAt >= STABLE_RUN_MILLIS ? 1 : defectsInRow + 1
      const delay = restartBackoff(defectsInRow)
      const died = options.observer?.died
      yield* observe(
        died === undefined
          ? Effect.logError(`event relay: the loop of sink ${sink.name} died; restarting in ${delay} ms`, cause)
          : died(sink.name, cause, delay)
      )
      yield* Effect.sleep(delay)
    }
  })

/**
 * Delivers the store's events to `sinks` until interrupted, each sink in a loop of its own with its own claims,
 * attempts and back-off, so a sink that is down or slow delays its own deliveries only: at least once per sink, each
 * retried with back-off until delivered or `giveUpAfterMillis` passed (then failed, kept, and replayable). A loop that
 * dies on a defect is told to the observer and restarted. At start and every `retargetMillis`, the pending deliveries
 * of sinks it does not have are moved to its own (`EventStore.retarget`).
 */
export const relayEvents = (options: RelayOptions): Effect.Effect<never, never, EventStore> => {
  const shared: SharedState = { retargetAt: 0 }
  return Effect.andThen(
    Effect.forEach(options.sinks, (sink) => supervised(options, sink, shared), {
      concurrency: "unbounded",
      discard: true
    }),
    Effect.never
  )
}
