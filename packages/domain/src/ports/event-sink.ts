import { Data, type Effect } from "effect"
import type { RecordedEvent } from "../events.js"

/** A sink did not take an event; the relay tries again later (docs/operations.md, "Events"). */
export class DeliveryFailed extends Data.TaggedError("DeliveryFailed")<{
  /** For the log: a status, "timeout", "connection refused", ... never a secret or a body. */
  readonly reason: string
  /**
   * The sink asked not to be tried again for this long (an HTTP `Retry-After`): the relay leaves the sink alone, and
   * the event, at least that long (up to its `maxRetryAfterMillis`).
   */
  readonly retryAfterMillis?: number
  /** The sink is gone for good (an HTTP 410): the relay stops attempting it until the relay restarts. */
  readonly gone?: boolean
}> {}

/**
 * Where the relay delivers events: a webhook endpoint, a NATS subject, or a host's own (docs/embedding.md, "Plugging
 * a sink of one's own"). `name` is stable across restarts: a store keeps each sink's progress by it.
 * `deliver` succeeds only once the sink has the event; it may be called again for one it already took (at least
 * once), so a consumer deduplicates by the event's id.
 */
export interface EventSink {
  readonly name: string
  /**
   * The longest one `deliver` takes (its time-outs): a deliverer holds what it claimed for twice that, plus a second,
   * so one that died holding a claim delays those events by about that. Absent: held for 5 minutes.
   */
  readonly attemptTimeoutMillis?: number
  readonly deliver: (event: RecordedEvent) => Effect.Effect<void, DeliveryFailed>
}
