import { Cause, Effect } from "effect"
import type { Unavailable } from "../errors.js"
import { EventStore } from "../ports/event-store.js"
import { now } from "./now.js"

/** How a relay's host keeps delivered events for a while, then removes them (docs/operations.md, "Events"). */
export interface PruneOptions {
  /** Delivered events whose change is older than this are removed. */
  readonly retentionMillis: number
  /** Events removed by one statement: small, so that it holds its rows briefly. Default 500. */
  readonly batchSize?: number
  /** The wait between two batches, so a long backlog never keeps the store busy. Default 100 ms. */
  readonly pauseMillis?: number
  /** The wait between two rounds. Default 10 minutes. */
  readonly intervalMillis?: number
  /** Told how many events each round removed, when it removed some. */
  readonly onPruned?: (count: number) => Effect.Effect<void>
  /**
   * Told of a round that ended on a defect (a bug: a store that cannot serve is only waited for); the next round
   * comes after the interval all the same. Absent: logged at error level with Effect's logger.
   */
  readonly onDefect?: (cause: Cause.Cause<unknown>) => Effect.Effect<void>
}

/** One round: batches of delivered events past the retention removed until a batch finds fewer; how many in all. */
export const pruneDeliveredOnce = (options: PruneOptions): Effect.Effect<number, Unavailable, EventStore> =>
  Effect.gen(function* () {
    const events = yield* EventStore
    const batchSize = options.batchSize ?? 500
    let total = 0
    for (;;) {
      const before = new Date((yield* now).getTime() - options.retentionMillis)
      const removed = yield* events.pruneDelivered(before, batchSize)
      total += removed
      if (removed < batchSize) return total
      yield* Effect.sleep(options.pauseMillis ?? 100)
    }
  })

/**
 * A round now, then one every `intervalMillis`, until interrupted; a store that cannot serve waits for the next, and a
 * round that ends on a defect is told (`onDefect`) and does not end the loop.
 */
export const pruneDeliveredEvents = (options: PruneOptions): Effect.Effect<never, never, EventStore> =>
  Effect.forever(
    Effect.andThen(
      Effect.catchCause(
        Effect.flatMap(
          Effect.orElseSucceed(pruneDeliveredOnce(options), () => 0),
          (count) => (count > 0 && options.onPruned !== undefined ? options.onPruned(count) : Effect.void)
        ),
        (cause) =>
          Cause.hasInterrupts(cause)
            ? Effect.failCause(cause)
            : (options.onDefect?.(cause) ?? Effect.logError("event retention: a round ended on a defect", cause))
      ),
      Effect.sleep(options.intervalMillis ?? 600_000)
    )
  )
