import { Effect } from "effect"
import type { UnknownCursor, Unavailable } from "../errors.js"
import type { RecordedEvent } from "../events.js"
import { EventStore } from "../ports/event-store.js"
import type { UserId } from "../values/ids.js"

/** The caller's own events, oldest first, after the cursor `after` (docs/api.md, "Events"). */
export const listUserEvents = (
  userId: UserId,
  after: string | undefined,
  limit: number
): Effect.Effect<ReadonlyArray<RecordedEvent>, UnknownCursor | Unavailable, EventStore> =>
  Effect.flatMap(EventStore, (events) => events.listByOwner(userId, after, limit))
