import {
  DEFAULT_EVENTS_PAGE,
  toEventEnvelope,
  toPatch,
  toPaymentMethodView,
  toPlanEntryView,
  toPreferencesView
} from "@accord/contract"
import {
  createPublicPlanEntry,
  getLanguagePreferences,
  listPaymentMethods,
  listUserEvents,
  setDefaultPaymentMethod,
  StoreAdmin,
  updateLanguagePreferences,
  EventStore
} from "@accord/domain"
import { Effect } from "effect"
import { ifMatchOn, type Implementations, type StreamImplementations } from "./http/implementation.js"

// Accord's implementation map: each operation of @accord/contract bound to its use case, its input mapped from the
// wire to the domain and its record back (the contract's mappers). `makeHttpHandler` takes it by default; a test or a
// host passes another (one operation stubbed: `{ ...accordImplementations, health: ... }`).

const HEALTHY = { status: "ok" } as const
const LIVE = Effect.succeed(HEALTHY)
const pingStore = Effect.flatMap(StoreAdmin, (admin) => Effect.as(admin.ping, HEALTHY))

/** Accord's implementation map: one entry per operation of the contract, or it does not compile. */
export const accordImplementations: Implementations = {
  createPublicPlanEntry: (_caller, { body }) => Effect.map(createPublicPlanEntry(body), toPlanEntryView),
  getLanguagePreferences: (userId) => Effect.map(getLanguagePreferences(userId), toPreferencesView),
  updateLanguagePreferences: (userId, { body, ifMatch }) =>
    Effect.map(
      updateLanguagePreferences(userId, toPatch(body), ifMatchOn(ifMatch, toPreferencesView)),
      toPreferencesView
    ),
  listPaymentMethods: (userId) =>
    Effect.map(listPaymentMethods(userId), (methods) => ({ data: methods.map(toPaymentMethodView) })),
  setDefaultPaymentMethod: (userId, { params, ifMatch }) =>
    Effect.map(
      setDefaultPaymentMethod(userId, params.id, ifMatchOn(ifMatch, toPaymentMethodView)),
      toPaymentMethodView
    ),
  // One more than the page asks for tells whether a next page has some (docs/api.md, "Events").
  listEvents: (userId, { query }) => {
    const limit = query.limit ?? DEFAULT_EVENTS_PAGE
    return Effect.map(listUserEvents(userId, query.after, limit + 1), (events) => ({
      data: events.slice(0, limit).map(toEventEnvelope),
      has_more: events.length > limit
    }))
  },
  health: () => pingStore,
  liveness: () => LIVE,
  readiness: () => pingStore
}

/**
 * Accord's stream implementations: the feed's events, live (docs/api.md, "Events"), each item the feed's element (its
 * envelope) and its id the feed's cursor; woken by the store's subscription.
 */
export const accordStreamImplementations: StreamImplementations = {
  listEvents: {
    page: (userId, after, limit) =>
      Effect.map(listUserEvents(userId, after, limit), (events) =>
        events.map((recorded) => ({ id: recorded.id, item: toEventEnvelope(recorded) }))
      ),
    subscribe: (userId, wake) => EventStore.use((events) => events.subscribe(userId, wake))
  }
}
