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
import { makeEventStore, type OnUnreadableEvent } from "./events.js"
import { makePaymentMethods } from "./payment-methods.js"
import { makePlanEntries } from "./plan-entries.js"
import { makePreferencesStore } from "./preferences.js"
import type { SqlExecutor } from "./sql-executor.js"

/** What the SQL store's ports are made with, besides the executor. */
export interface SqlStoreOptions extends CredentialCacheOptions {
  /**
   * Called with the id of every stored event this version cannot read (a type it does not know, values its Schema
   * refuses), which a listing skips: for the host's log; default effect's logger.
   */
  readonly onUnreadableEvent?: OnUnreadableEvent
}

/** All the ports over one executor whose database is already migrated. */
export const makeSqlStore = (
  sql: SqlExecutor,
  options: SqlStoreOptions = {}
): Effect.Effect<Context.Context<StoreServices>> =>
  Effect.map(makeAuthenticator(sql, options), (authenticator) =>
    Context.make(PlanEntries, makePlanEntries(sql)).pipe(
      Context.add(PreferencesStore, makePreferencesStore(sql)),
      Context.add(PaymentMethods, makePaymentMethods(sql)),
      Context.add(EventStore, makeEventStore(sql, options.onUnreadableEvent)),
      Context.add(Authenticator, authenticator),
      Context.add(StoreAdmin, makeStoreAdmin(sql))
    )
  )
