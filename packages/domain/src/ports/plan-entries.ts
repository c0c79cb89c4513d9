import { Context, type Effect } from "effect"
import type { Unavailable } from "../errors.js"
import type { DomainEvent } from "../events.js"
import type { PlanEntry } from "../plan-entry.js"

/** Stored public plan entries, unique by `emailKey`. */
export class PlanEntries extends Context.Service<
  PlanEntries,
  {
    /**
     * Stores the entry unless one with the same `emailKey` exists; never overwrites. True when it was stored, and then
     * `events` are recorded in the same atomic step (none when it was not).
     */
    readonly insertIfAbsent: (
      entry: PlanEntry,
      events: ReadonlyArray<DomainEvent>
    ) => Effect.Effect<boolean, Unavailable>
    readonly findByEmailKey: (emailKey: string) => Effect.Effect<PlanEntry | undefined, Unavailable>
  }
>()("@accord/domain/PlanEntries") {}
