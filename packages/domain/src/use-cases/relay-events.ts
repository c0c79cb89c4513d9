import { Effect, Random } from "effect"
import type { Unavailable } from "../errors.js"
import { EventStore, type PendingEvent, type Settlement } from "../ports/event-store.js"
import type { EventSink } from "../ports/event-sink.js"
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

/** How one relay delivers (docs/operations.md, "Events"); every field but `sinks` has a default. */
export interface RelayOptions {
  readonly sinks: ReadonlyArray<EventSink>
  /** Milliseconds to wait after `attempts` failed attempts. Default `exponentialBackoff()` (1 s doubling to 1 h). */
  readonly backoff?: (attempts: number) => Effect.Effect<number>
  /** An event still undelivered this long after it was recorded is marked failed. Default 3 days. */
  readonly giveUpAfterMillis?: number
  /** Events claimed at a time. Default 100. */
  readonly batchSize?: number
  /** Events delivered at once. Default 8. */
  readonly concurrency?: number
  /** How long a claimed event is this relay's before another may take it. Default 5 minutes. */
  readonly leaseMillis?: number
  /** The wait between two looks at the store when nothing is due. Default 1 s. */
  readonly pollMillis?: number
  /** Called once per attempt's outcome (metrics, logs): the event, what it left, and the sinks that refused it. */
  readonly onSettled?: (
    event: PendingEvent,
    settlement: Settlement,
    refusals: ReadonlyArray<{ readonly sink: string; readonly reason: string }>
  ) => Effect.Effect<void>
}

const DAY = 86_400_000

/** One attempt at one event: every sink that has not taken it yet, then what that leaves. */
const attempt = (options: RelayOptions, pending: PendingEvent) =>
  Effect.gen(function* () {
    const deliveredTo = [...pending.deliveredTo]
    const refusals: Array<{ sink: string; reason: string }> = []
    for (const sink of options.sinks) {
      if (deliveredTo.includes(sink.name)) continue
      const outcome = yield* Effect.result(sink.deliver(pending.recorded))
      if (outcome._tag === "Success") deliveredTo.push(sink.name)
      else refusals.push({ sink: sink.name, reason: outcome.failure.reason })
    }
    const at = yield* now
    const attempts = pending.attempts + 1
    const settlement: Settlement =
      refusals.length === 0
        ? { status: "delivered", attempts, deliveredTo, nextAttemptAt: undefined }
        : at.getTime() - pending.recorded.event.at.getTime() >= (options.giveUpAfterMillis ?? 3 * DAY)
          ? { status: "failed", attempts, deliveredTo, nextAttemptAt: undefined }
          : {
              status: "pending",
              attempts,
              deliveredTo,
              nextAttemptAt: new Date(at.getTime() + (yield* (options.backoff ?? exponentialBackoff())(attempts)))
            }
    const events = yield* EventStore
    yield* events.settle(pending.recorded.id, settlement)
    if (options.onSettled !== undefined) yield* options.onSettled(pending, settlement, refusals)
  })

/** Claims the events due now and attempts each once; how many it attempted (0: nothing was due). */
export const relayOnce = (options: RelayOptions): Effect.Effect<number, Unavailable, EventStore> =>
  Effect.gen(function* () {
    const events = yield* EventStore
    const at = yield* now
    const due = yield* events.claimDue(
      at,
      new Date(at.getTime() + (options.leaseMillis ?? 300_000)),
      options.batchSize ?? 100
    )
    yield* Effect.forEach(due, (pending) => attempt(options, pending), {
      concurrency: options.concurrency ?? 8,
      discard: true
    })
    return due.length
  })

/**
 * Delivers the store's pending events to `sinks` until interrupted: at least once, each retried with back-off until it
 * is delivered or `giveUpAfterMillis` passed (then failed, kept, and replayable). A store that cannot serve is
 * waited for, like an empty one.
 */
export const relayEvents = (options: RelayOptions): Effect.Effect<never, never, EventStore> =>
  Effect.forever(
    Effect.flatMap(
      Effect.orElseSucceed(relayOnce(options), () => 0),
      (attempted) => (attempted === 0 ? Effect.sleep(options.pollMillis ?? 1_000) : Effect.void)
    )
  )
