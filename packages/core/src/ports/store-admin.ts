import { Context, type Effect } from "effect"
import type { Unavailable } from "../domain/errors.js"
import type { Seed, SeedReport } from "../domain/seed.js"

/** Store-level operations outside the use cases: seed loading and a liveness probe for `/api/health`. */
export class StoreAdmin extends Context.Service<
  StoreAdmin,
  {
    /** Inserts what is missing; never changes an existing row. A token already known is left as it is. */
    readonly loadSeed: (seed: Seed) => Effect.Effect<SeedReport, Unavailable>
    /** Succeeds when the store can serve requests now. */
    readonly ping: Effect.Effect<void, Unavailable>
  }
>()("@accord/core/StoreAdmin") {}
