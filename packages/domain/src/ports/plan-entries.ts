import { Context, type Effect } from "effect"
import type { Unavailable } from "../errors.js"
import type { PlanEntry } from "../plan-entry.js"

/** Stored public plan entries, unique by `emailKey`. */
export class PlanEntries extends Context.Service<
  PlanEntries,
  {
    /** Stores the entry unless one with the same `emailKey` exists; never overwrites. True when it was stored. */
    readonly insertIfAbsent: (entry: PlanEntry) => Effect.Effect<boolean, Unavailable>
    readonly findByEmailKey: (emailKey: string) => Effect.Effect<PlanEntry | undefined, Unavailable>
  }
>()("@accord/domain/PlanEntries") {}
