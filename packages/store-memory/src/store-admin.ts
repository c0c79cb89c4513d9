import { Clock, Effect, HashMap, Ref } from "effect"
import { type Seed, type SeedReport, StoreAdmin } from "@accord/domain"
import { addCredentials, type CredentialSeed } from "./authenticator.js"
import { insertIfAbsent } from "./payment-methods.js"
import type { MemoryState } from "./state.js"

const credentialSeeds = (seed: Seed): ReadonlyArray<CredentialSeed> => [
  ...seed.users.map((user) => ({ kind: "user" as const, id: user.id, token: user.token })),
  ...seed.clients.map((client) => ({ kind: "client" as const, id: client.id, token: client.token }))
]

/** Inserts what the seed has and the store lacks; never changes what is there. Cannot fail in memory. */
export const loadSeedInto = (state: MemoryState, seed: Seed): Effect.Effect<SeedReport> =>
  Effect.gen(function* () {
    const now = new Date(yield* Clock.currentTimeMillis)
    const credentialsAdded = yield* addCredentials(state, credentialSeeds(seed))
    const paymentMethodsAdded = yield* Ref.modify(state.paymentMethods, (current) => {
      let added = 0
      let next = current
      for (const method of seed.payment_methods) {
        const [inserted, after] = insertIfAbsent(
          next,
          { id: method.id, userId: method.user_id, isDefault: method.is_default },
          now
        )
        if (inserted) added++
        next = after
      }
      return [added, next]
    })
    return { credentialsAdded, paymentMethodsAdded }
  })

export const makeStoreAdmin = (state: MemoryState) =>
  StoreAdmin.of({
    loadSeed: (seed) => loadSeedInto(state, seed),
    ping: Effect.void,
    countCredentials: Effect.map(Ref.get(state.credentials), HashMap.size)
  })
