import { Context, type Effect } from "effect"
import type { Unavailable } from "../errors.js"
import type { Seed, SeedReport } from "../seed.js"

/**
 * Store-level operations outside the use cases: seed loading, a liveness probe for `/api/health`, and a count of the
 * credentials for the server's start-up warning.
 */
export class StoreAdmin extends Context.Service<
  StoreAdmin,
  {
    /** Inserts what is missing; never changes an existing row. A token already known is left as it is. */
    readonly loadSeed: (seed: Seed) => Effect.Effect<SeedReport, Unavailable>
    /** Succeeds when the store can serve requests now. */
    readonly ping: Effect.Effect<void, Unavailable>
    /** The tokens the store authenticates; none: every call but the health probes and the docs is 401. */
    readonly countCredentials: Effect.Effect<number, Unavailable>
  }
>()("@accord/domain/StoreAdmin") {}
