import { Context, Effect } from "effect"
import {
  Authenticator,
  PaymentMethods,
  PlanEntries,
  EventStore,
  type EventWakeups,
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
import { makeTurns } from "./turns.js"

/** What the SQL store's ports are made with, besides the executor. */
export interface SqlStoreOptions extends CredentialCacheOptions {
  /**
   * Called with the id of every stored event this version cannot read (a type it does not know, values its Schema
   * refuses), which a listing skips: for the host's log; default effect's logger.
   */
  readonly onUnreadableEvent?: OnUnreadableEvent
  /**
   * The longest a write waits in this process for its record's turn (docs/operations.md, "Writes under contention")
   * before Unavailable(store_busy), a 503 with Retry-After; default `DEFAULT_TURN_WAIT_MS`. The PostgreSQL store's
   * default is its query timeout.
   */
  readonly turnWaitMs?: number
  /**
   * Where the live streams wait for an owner's next event (`EventStore.subscribe`), woken by the database's
   * notifications (`EVENTS_CHANNEL`) where the layer listens; default: nothing wakes them but their own periodic read.
   */
  readonly eventWakeups?: EventWakeups
}

/** The longest a write waits for its record's turn when nothing says otherwise: the default query timeout. */
export const DEFAULT_TURN_WAIT_MS = 5000

/** All the ports over one executor whose database is already migrated. */
export const makeSqlStore = (
  sql: SqlExecutor,
  options: SqlStoreOptions = {}
): Effect.Effect<Context.Context<StoreServices>> =>
  Effect.map(makeAuthenticator(sql, options), (authenticator) => {
    const turns = makeTurns(options.turnWaitMs ?? DEFAULT_TURN_WAIT_MS)
    return Context.make(PlanEntries, makePlanEntries(sql)).pipe(
      Context.add(PreferencesStore, makePreferencesStore(sql, turns)),
      Context.add(PaymentMethods, makePaymentMethods(sql, turns)),
      Context.add(EventStore, makeEventStore(sql, options.onUnreadableEvent, options.eventWakeups)),
      Context.add(Authenticator, authenticator),
      Context.add(StoreAdmin, makeStoreAdmin(sql))
    )
  })
