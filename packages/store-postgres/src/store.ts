import { Context } from "effect"
import {
  Authenticator,
  PaymentMethods,
  PlanEntries,
  PreferencesStore,
  StoreAdmin,
  type StoreServices
} from "@accord/domain"
import { makeAuthenticator, makeStoreAdmin } from "./credentials.js"
import { makePaymentMethods } from "./payment-methods.js"
import { makePlanEntries } from "./plan-entries.js"
import { makePreferencesStore } from "./preferences.js"
import type { SqlExecutor } from "./sql-executor.js"

/** All the ports over one executor whose database is already migrated. */
export const makeSqlStore = (sql: SqlExecutor): Context.Context<StoreServices> =>
  Context.make(PlanEntries, makePlanEntries(sql)).pipe(
    Context.add(PreferencesStore, makePreferencesStore(sql)),
    Context.add(PaymentMethods, makePaymentMethods(sql)),
    Context.add(Authenticator, makeAuthenticator(sql)),
    Context.add(StoreAdmin, makeStoreAdmin(sql))
  )
