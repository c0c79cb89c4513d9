import { Context, type Effect } from "effect"
import type { UnknownCursor, Unavailable } from "../errors.js"
import type { RecordedEvent } from "../events.js"
import type { UserId } from "../values/ids.js"

/**
 * Where an event stands with its deliverers (docs/operations.md, "Events"), and where one delivery of it (to one
 * sink) stands. An event is pending while one of its deliveries is, delivered once every one is, failed once none is
 * pending and one was given up.
 */
export type DeliveryStatus = "pending" | "delivered" | "failed"

/**
 * One event's delivery to one sink, as a deliverer claims it. Each sink has its own progress (attempts, back-off,
 * claims), so a sink that is down or slow delays its own deliveries only.
 */
export interface PendingDelivery {
  readonly recorded: RecordedEvent
  /** The sink's name (`EventSink.name`). */
  readonly sink: string
  /** Attempts at this sink so far (0: never tried; a replay starts again from 0). */
  readonly attempts: number
  /** Where its give-up clock starts: the event's change, or the replay that made it pending again. */
  readonly since: Date
}

/** What a delivery attempt leaves: the delivery's new status, and when pending, when to try again. */
export interface Settlement {
  readonly status: DeliveryStatus
  readonly attempts: number
  /** The next attempt, when still pending. */
  readonly nextAttemptAt: Date | undefined
}

/** A sink's deliveries still to make, and those given up (the metrics; delivered ones are not counted). */
export interface SinkBacklog {
  readonly sink: string
  readonly pending: number
  readonly failed: number
}

/**
 * The events a store recorded with its changes (each write port records its own, in its own atomic step), read by
 * the feed and delivered by the relay (`relayEvents`): `dispatch` gives each newly recorded event one delivery per
 * sink, then each sink's deliveries are claimed, attempted and settled apart from the others'. Delivered events are
 * kept until `pruneDelivered` removes them.
 */
export class EventStore extends Context.Service<
  EventStore,
  {
    /**
     * The events of `owner`, oldest first: after the event `after` (undefined: from the first), at most `limit`.
     * UnknownCursor when `after` is not one of `owner`'s events' ids exactly as issued (`isIssuedEventId`): another
     * spelling of the same UUID is none.
     */
    readonly listByOwner: (
      owner: UserId,
      after: string | undefined,
      limit: number
    ) => Effect.Effect<ReadonlyArray<RecordedEvent>, UnknownCursor | Unavailable>
    /**
     * Calls `wake` each time an event of `owner` may have been recorded since (docs/api.md, "Events": the live
     * stream), until the returned function is called: in process for a store that lives in one, and from every
     * process for one that many share. A wake-up says only "read again" (`listByOwner`); none is promised for every
     * event, so a reader also reads again now and then.
     */
    readonly subscribe: (owner: UserId, wake: () => void) => Effect.Effect<() => void>
    /** Every event, in the order they were recorded, after `after` (as `listByOwner` takes it), at most `limit`. */
    readonly list: (
      after: string | undefined,
      limit: number
    ) => Effect.Effect<ReadonlyArray<RecordedEvent>, UnknownCursor | Unavailable>
    /**
     * Gives up to `limit` events not dispatched yet, oldest first, a pending delivery for each of `sinks`, due at once,
     * its give-up clock from the event's change; how many events. Each event is dispatched once, whoever calls (across
     * processes): a sink added later gets the events recorded after that. An event pending from before per-sink
     * progress existed keeps the sinks that took it then.
     */
    readonly dispatch: (sinks: ReadonlyArray<string>, limit: number) => Effect.Effect<number, Unavailable>
    /**
     * Moves the pending deliveries of every sink not in `sinks` (one removed from the configuration, or an endpoint
     * whose URL changed) to `sinks`: each such event gets a pending delivery for each of `sinks` that has none; how
     * many events. What was delivered to a removed sink stays recorded.
     */
    readonly retarget: (sinks: ReadonlyArray<string>) => Effect.Effect<number, Unavailable>
    /**
     * Up to `limit` pending deliveries to `sink` due at `now` that no other deliverer holds, each held until
     * `leaseUntil` (then another deliverer may take it: one that died holding it delays it, never loses it).
     */
    readonly claimDue: (
      sink: string,
      now: Date,
      leaseUntil: Date,
      limit: number
    ) => Effect.Effect<ReadonlyArray<PendingDelivery>, Unavailable>
    /**
     * Records what an attempt at a claimed delivery left, releases it, and updates its event's status. A delivery
     * that is no longer pending (another deliverer settled it) is left as it is.
     */
    readonly settle: (eventId: string, sink: string, settlement: Settlement) => Effect.Effect<void, Unavailable>
    /**
     * Every delivery given up pending again, due at `now`, with its attempts from 0 and its give-up clock from `now`
     * (the replay command); how many events.
     */
    readonly replayFailed: (now: Date) => Effect.Effect<number, Unavailable>
    /** How many events are in each status (the metrics). */
    readonly countByStatus: Effect.Effect<Readonly<Record<DeliveryStatus, number>>, Unavailable>
    /** Each sink's deliveries pending and failed (the metrics), for the sinks that have any. */
    readonly countBySink: Effect.Effect<ReadonlyArray<SinkBacklog>, Unavailable>
    /**
     * Removes up to `limit` delivered events whose change is older than `before`, oldest first, skipping any another
     * statement holds; how many. Pending and failed events are kept. A store whose events do not outlive its process
     * (memory) removes none.
     */
    readonly pruneDelivered: (before: Date, limit: number) => Effect.Effect<number, Unavailable>
  }
>()("@accord/domain/EventStore") {}
