import { Context, Effect, Layer } from "effect"
import type { AccordServices } from "../services.js"
import { Authenticator } from "./authenticator.js"
import { EventStore } from "./event-store.js"
import { PasswordHasher } from "./password-hasher.js"
import { PaymentMethods } from "./payment-methods.js"
import { PlanEntries } from "./plan-entries.js"
import { PreferencesStore } from "./preferences-store.js"
import { StoreAdmin } from "./store-admin.js"

/**
 * A port call in a span named `Port.method` (docs/operations.md, "Traces"). No argument is recorded: they are user
 * ids, emails, password hashes and tokens. No stack is captured: it would point here, not at the caller.
 */
const spanned = <A, E, R>(name: string, effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withSpan(effect, name, { captureStackTrace: false })

// One function per port, every method listed (no spread): a method added to a port fails to compile here until it
// is traced too.

const tracePlanEntries = (entries: PlanEntries["Service"]): PlanEntries["Service"] => ({
  insertIfAbsent: (entry, events) => spanned("PlanEntries.insertIfAbsent", entries.insertIfAbsent(entry, events)),
  findByEmailKey: (emailKey) => spanned("PlanEntries.findByEmailKey", entries.findByEmailKey(emailKey))
})

const tracePreferencesStore = (store: PreferencesStore["Service"]): PreferencesStore["Service"] => ({
  getOrCreate: (userId, now) => spanned("PreferencesStore.getOrCreate", store.getOrCreate(userId, now)),
  update: (userId, merge, precondition) => spanned("PreferencesStore.update", store.update(userId, merge, precondition))
})

const tracePaymentMethods = (methods: PaymentMethods["Service"]): PaymentMethods["Service"] => ({
  listByUser: (userId) => spanned("PaymentMethods.listByUser", methods.listByUser(userId)),
  setDefault: (userId, id, now, events, precondition) =>
    spanned("PaymentMethods.setDefault", methods.setDefault(userId, id, now, events, precondition))
})

const traceEventStore = (events: EventStore["Service"]): EventStore["Service"] => ({
  listByOwner: (owner, after, limit) => spanned("EventStore.listByOwner", events.listByOwner(owner, after, limit)),
  // No span: a subscription is no call to the store, and it lasts as long as a stream.
  subscribe: events.subscribe,
  list: (after, limit) => spanned("EventStore.list", events.list(after, limit)),
  dispatch: (sinks, limit) => spanned("EventStore.dispatch", events.dispatch(sinks, limit)),
  retarget: (sinks) => spanned("EventStore.retarget", events.retarget(sinks)),
  claimDue: (sink, now, leaseUntil, limit) =>
    spanned("EventStore.claimDue", events.claimDue(sink, now, leaseUntil, limit)),
  settle: (eventId, sink, settlement) => spanned("EventStore.settle", events.settle(eventId, sink, settlement)),
  replayFailed: (now) => spanned("EventStore.replayFailed", events.replayFailed(now)),
  countByStatus: spanned("EventStore.countByStatus", events.countByStatus),
  countBySink: spanned("EventStore.countBySink", events.countBySink),
  pruneDelivered: (before, limit) => spanned("EventStore.pruneDelivered", events.pruneDelivered(before, limit))
})

const traceAuthenticator = (authenticator: Authenticator["Service"]): Authenticator["Service"] => ({
  authenticate: (token) => spanned("Authenticator.authenticate", authenticator.authenticate(token))
})

const traceStoreAdmin = (admin: StoreAdmin["Service"]): StoreAdmin["Service"] => ({
  loadSeed: (seed) => spanned("StoreAdmin.loadSeed", admin.loadSeed(seed)),
  ping: spanned("StoreAdmin.ping", admin.ping),
  countCredentials: spanned("StoreAdmin.countCredentials", admin.countCredentials)
})

const tracePasswordHasher = (hasher: PasswordHasher["Service"]): PasswordHasher["Service"] => ({
  hash: (password) => spanned("PasswordHasher.hash", hasher.hash(password)),
  verify: (password, hash) => spanned("PasswordHasher.verify", hasher.verify(password, hash))
})

/** Every port of the context it is given, each method in its own span. */
const TracedPorts: Layer.Layer<AccordServices, never, AccordServices> = Layer.effectContext(
  Effect.map(Effect.context<AccordServices>(), (context) =>
    Context.make(PlanEntries, tracePlanEntries(Context.get(context, PlanEntries))).pipe(
      Context.add(PreferencesStore, tracePreferencesStore(Context.get(context, PreferencesStore))),
      Context.add(PaymentMethods, tracePaymentMethods(Context.get(context, PaymentMethods))),
      Context.add(Authenticator, traceAuthenticator(Context.get(context, Authenticator))),
      Context.add(EventStore, traceEventStore(Context.get(context, EventStore))),
      Context.add(StoreAdmin, traceStoreAdmin(Context.get(context, StoreAdmin))),
      Context.add(PasswordHasher, tracePasswordHasher(Context.get(context, PasswordHasher)))
    )
  )
)

/**
 * The same services, each port call in a span (a child of the use case's span, itself the request's). A host applies
 * it only when it traces: untraced, the ports run as they are, with no span made.
 */
export const withPortSpans = <E, R>(layer: Layer.Layer<AccordServices, E, R>): Layer.Layer<AccordServices, E, R> =>
  Layer.provide(TracedPorts, layer)
