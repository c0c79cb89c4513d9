import { Context, type Effect } from "effect"
import type { UnknownCursor, Unavailable } from "../errors.js"
import type { RecordedEvent } from "../events.js"
import type { UserId } from "../values/ids.js"

/** Where an event stands with its deliverers (docs/operations.md, "Events"). */
export type DeliveryStatus = "pending" | "delivered" | "failed"

/** A pending event as a deliverer claims it. */
export interface PendingEvent {
  readonly recorded: RecordedEvent
  /** Delivery attempts made so far (0: never tried). */
  readonly attempts: number
  /** The sinks (by name) that already took it: a retry skips them. */
  readonly deliveredTo: ReadonlyArray<string>
}

/** What a delivery attempt leaves: the new status, and when pending, when to try again. */
export interface Settlement {
  readonly status: DeliveryStatus
  readonly attempts: number
  readonly deliveredTo: ReadonlyArray<string>
  /** The next attempt, when still pending. */
  readonly nextAttemptAt: Date | undefined
}

/**
 * The events a store recorded with its changes (each write port records its own, in its own atomic step), read by
 * the feed and claimed by the deliverers (the relay: `relayEvents`). Events are kept after delivery.
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
    /** Every event, in the order they were recorded, after `after` (as `listByOwner` takes it), at most `limit`. */
    readonly list: (
      after: string | undefined,
      limit: number
    ) => Effect.Effect<ReadonlyArray<RecordedEvent>, UnknownCursor | Unavailable>
    /**
     * Up to `limit` pending events due at `now` that no other deliverer holds, oldest first, each held until
     * `leaseUntil` (then another deliverer may take it: one that died holding it delays it, never loses it).
     */
    readonly claimDue: (
      now: Date,
      leaseUntil: Date,
      limit: number
    ) => Effect.Effect<ReadonlyArray<PendingEvent>, Unavailable>
    /** Records what a claimed event's delivery attempt left, and releases it. */
    readonly settle: (id: string, settlement: Settlement) => Effect.Effect<void, Unavailable>
    /** Every failed event pending again, due at `now` (the replay command); how many. */
    readonly replayFailed: (now: Date) => Effect.Effect<number, Unavailable>
    /** How many events are in each status (the metrics). */
    readonly countByStatus: Effect.Effect<Readonly<Record<DeliveryStatus, number>>, Unavailable>
  }
>()("@accord/domain/EventStore") {}
