import { Data, type Effect } from "effect"
import type { RecordedEvent } from "../events.js"

/** A sink did not take an event; the relay tries again later (docs/operations.md, "Events"). */
export class DeliveryFailed extends Data.TaggedError("DeliveryFailed")<{
  /** For the log: a status, "timeout", "connection refused", ... never a secret or a body. */
  readonly reason: string
}> {}

/**
 * Where the relay delivers events: a webhook endpoint, a NATS subject, or a host's own (docs/embedding.md, "Plugging
 * a sink of one's own"). `name` is stable across restarts: a store remembers which sinks took an event by it.
 * `deliver` succeeds only once the sink has the event; it may be called again for one it already took (at least
 * once), so a consumer deduplicates by the event's id.
 */
export interface EventSink {
  readonly name: string
  readonly deliver: (event: RecordedEvent) => Effect.Effect<void, DeliveryFailed>
}
