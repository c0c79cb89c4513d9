import { Context, Effect } from "effect"
import {
  Authenticator,
  PaymentMethods,
  PlanEntries,
  EventStore,
  PreferencesStore,
  StoreAdmin,
  type StoreServices
} from "@accord/domain"
import { type CredentialCacheOptions, makeAuthenticator, makeStoreAdmin } from "./credentials.js"
import { makeEventStore } from "./events.js"
import { makePaymentMethods } from "./payment-methods.js"
import { makePlanEntries } from "./plan-entries.js"
import { makePreferencesStore } from "./preferences.js"
import type { SqlExecutor } from "./sql-executor.js"

/** All the ports over one executor whose database is already migrated. */
export const makeSqlStore = (
  sql: SqlExecutor,
  options: CredentialCacheOptions = {}
): Effect.Effect<Context.Context<StoreServices>> =>
  Effect.map(makeAuthenticator(sql, options), (authenticator) =>
    Context.make(PlanEntries, makePlanEntries(sql)).pipe(
      Context.add(PreferencesStore, makePreferencesStore(sql)),
      Context.add(PaymentMethods, makePaymentMethods(sql)),
      Context.add(EventStore, makeEventStore(sql)),
      Context.add(Authenticator, authenticator),
      Context.add(StoreAdmin, makeStoreAdmin(sql))
    )
  )
