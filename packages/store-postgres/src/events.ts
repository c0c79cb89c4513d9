import { Effect } from "effect"
import { EventStore } from "@accord/domain"
import type { SqlExecutor } from "./sql-executor.js"

/**
 * The SQL store's events. Phase B of issue 31 writes them to an outbox table in each change's own transaction; until
 * then this store records none, so its feed is empty and its relay finds nothing to deliver.
 */
export const makeEventStore = (_sql: SqlExecutor) =>
  EventStore.of({
    listByOwner: () => Effect.succeed([]),
    list: () => Effect.succeed([]),
    claimDue: () => Effect.succeed([]),
    settle: () => Effect.void,
    replayFailed: () => Effect.succeed(0),
    countByStatus: Effect.succeed({ pending: 0, delivered: 0, failed: 0 })
  })
