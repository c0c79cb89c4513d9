import { Context, Effect, Layer } from "effect"
import {
  Authenticator,
  EventStore,
  PaymentMethods,
  PlanEntries,
  PreferencesKind,
  PreferencesStore,
  type Seed,
  StoreAdmin,
  type StoreServices
} from "@accord/domain"
import { makeAuthenticator } from "./authenticator.js"
import { makeEventStore } from "./events.js"
import { makePaymentMethods } from "./payment-methods.js"
import { makePlanEntries } from "./plan-entries.js"
import { makeMergeRecordStore } from "./merge-records.js"
import { loadSeedInto, makeStoreAdmin } from "./store-admin.js"
import { makeMemoryState } from "./state.js"

/**
 * A fresh in-process store: each build of the layer starts empty (then loads `seed`, when given). Nothing outlives
 * the process.
 */
export const makeMemoryStore = (seed?: Seed): Layer.Layer<StoreServices> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const state = yield* makeMemoryState
      if (seed !== undefined) yield* loadSeedInto(state, seed)
      return Context.make(PlanEntries, makePlanEntries(state)).pipe(
        Context.add(
          PreferencesStore,
          PreferencesStore.of(makeMergeRecordStore(PreferencesKind, state.preferences, state.events))
        ),
        Context.add(PaymentMethods, makePaymentMethods(state)),
        Context.add(EventStore, makeEventStore(state.events)),
        Context.add(Authenticator, makeAuthenticator(state)),
        Context.add(StoreAdmin, makeStoreAdmin(state))
      )
    })
  )

/** An empty memory store; load data through `StoreAdmin.loadSeed` or use `makeMemoryStore(seed)`. */
export const MemoryStoreLive: Layer.Layer<StoreServices> = makeMemoryStore()
