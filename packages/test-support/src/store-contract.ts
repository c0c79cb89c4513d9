import { randomBytes } from "node:crypto"
import { describe, expect, layer } from "@effect/vitest"
import { Effect, type Layer, Schema } from "effect"
import {
  applyMerge,
  Authenticator,
  defaultPaymentMethodChanged,
  type DeliveryStatus,
  Email,
  EventStore,
  planEntryCreated,
  type RecordedEvent,
  UnknownCursor,
  emailKey,
  LanguageTag,
  NotFound,
  PasswordHash,
  type PaymentMethod,
  PaymentMethodId,
  PaymentMethods,
  PlanEntries,
  PreconditionFailed,
  type PreferenceFields,
  type Preferences,
  PreferencesKind,
  PreferencesStore,
  sameVersion,
  Seed,
  type SeedInput,
  StoreAdmin,
  type StoreServices,
  TimezoneOffset,
  Unauthenticated,
  UserId
} from "@accord/domain"

/** Random suffix: the layer is built once per suite (and a database may outlive it), so no two tests share ids. */
const unique = (prefix: string): string => `${prefix}_${randomBytes(8).toString("hex")}`
const freshUser = (): UserId => UserId.make(unique("u"))
const freshMethodId = (): PaymentMethodId => PaymentMethodId.make(unique("pm"))
const freshToken = (): string => unique("tok")

const decodeSeed = Schema.decodeUnknownSync(Seed)
const decodeEmail = Schema.decodeUnknownSync(Email)

const loadSeed = (input: SeedInput) => Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(decodeSeed(input)))
const listByUser = (userId: UserId) => Effect.flatMap(PaymentMethods, (methods) => methods.listByUser(userId))
const recordDefault = (previous: PaymentMethod | undefined, chosen: PaymentMethod) => [
  defaultPaymentMethodChanged(previous, chosen)
]
const setDefault = (userId: UserId, id: PaymentMethodId, now: Date) =>
  Effect.flatMap(PaymentMethods, (methods) => methods.setDefault(userId, id, now, recordDefault))
const getOrCreate = (userId: UserId, now: Date) =>
  Effect.flatMap(PreferencesStore, (store) => store.getOrCreate(userId, now))
const update = (
  userId: UserId,
  set: Partial<PreferenceFields>,
  now: Date,
  precondition?: (current: Preferences) => boolean
) => Effect.flatMap(PreferencesStore, (store) => store.update(userId, { set, at: now }, precondition))
const authenticate = (token: string) => Effect.flatMap(Authenticator, (auth) => auth.authenticate(token))

/** The item at `index`; the tests seed what they index, so a miss is a bug in the test itself. */
const nth = <A>(items: ReadonlyArray<A>, index: number): A => {
  const item = items[index]
  if (item === undefined) throw new Error(`no item at ${index}`)
  return item
}

const defaultsOf = (methods: ReadonlyArray<PaymentMethod>) => methods.filter((method) => method.isDefault)

/** Distinct instants well apart from each other and from "now", so a changed timestamp is visible. */
const at = (minutes: number): Date => new Date(Date.UTC(2030, 0, 1, 0, minutes))

const seedUserWithMethods = (count: number, defaultIndex?: number) =>
  Effect.gen(function* () {
    const userId = freshUser()
    const ids = Array.from({ length: count }, freshMethodId)
    yield* loadSeed({
      payment_methods: ids.map((id, index) => ({ id, user_id: userId, is_default: index === defaultIndex }))
    })
    return { userId, ids }
  })

/**
 * The contract every store honours, as a vitest suite. The layer is built once for the whole suite; each test uses
 * its own random ids and seeds its own data, so the suite also runs against a database that already holds data.
 */
const ownEvents = (userId: UserId, after?: string, limit = 100) =>
  Effect.flatMap(EventStore, (events) => events.listByOwner(userId, after, limit))
const typesOf = (events: ReadonlyArray<RecordedEvent>) => events.map((recorded) => recorded.event.type)

/** Dispatches every event not dispatched yet to `sinks`; how many. */
const dispatchEverything = (...sinks: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const events = yield* EventStore
    let total = 0
    for (let dispatched = -1; dispatched !== 0; total += dispatched) dispatched = yield* events.dispatch(sinks, 100)
    return total
  })

const backlogOf = (sink: string) =>
  Effect.map(
    Effect.flatMap(EventStore, (events) => events.countBySink),
    (backlogs) => backlogs.find((backlog) => backlog.sink === sink)
  )

const delta = (before: Readonly<Record<DeliveryStatus, number>>, after: Readonly<Record<DeliveryStatus, number>>) => ({
  pending: after.pending - before.pending,
  delivered: after.delivered - before.delivered,
  failed: after.failed - before.failed
})

export interface StoreContractOptions {
  /** Whether `EventStore.pruneDelivered` removes events (the SQL stores), or keeps every one (memory). */
  readonly prunes: boolean
}

export const runStoreContract = (
  name: string,
  storeLayer: Layer.Layer<StoreServices, unknown>,
  options: StoreContractOptions = { prunes: true }
): void => {
  // Live services: stores may use Clock or timeouts internally, and a TestClock that never moves would stall them.
  layer(storeLayer, { excludeTestServices: true })(`store contract: ${name}`, (it) => {
    describe("StoreAdmin", () => {
      it.effect("ping succeeds", () => Effect.flatMap(StoreAdmin, (admin) => admin.ping))

      // What the server's "the store is empty" warning reads, on every store (packages/server, start.ts).
      it.effect("countCredentials counts each token once: a seed's new tokens add to it, known ones do not", () =>
        Effect.gen(function* () {
          const admin = yield* StoreAdmin
          const before = yield* admin.countCredentials
          expect(before).toBeGreaterThanOrEqual(0)
          const seed = {
            users: [
              { id: freshUser(), token: freshToken() },
              { id: freshUser(), token: freshToken() }
            ],
            clients: [{ id: unique("client"), token: freshToken() }]
          }
          yield* loadSeed(seed)
          expect(yield* admin.countCredentials).toBe(before + 3)
          yield* loadSeed(seed)
          expect(yield* admin.countCredentials).toBe(before + 3)
        })
      )
    })

    describe("PlanEntries", () => {
      const entryFor = (address: string, hash: string) => {
        const email = decodeEmail(address)
        return { email, emailKey: emailKey(email), passwordHash: PasswordHash.make(hash), createdAt: at(0) }
      }

      it.effect("insertIfAbsent stores a new entry and findByEmailKey returns it", () =>
        Effect.gen(function* () {
          const entries = yield* PlanEntries
          const entry = entryFor(`${unique("new")}@Example.COM`, "scrypt$first")
          expect(yield* entries.insertIfAbsent(entry, [planEntryCreated(entry)])).toBe(true)
          expect(yield* entries.findByEmailKey(entry.emailKey)).toEqual(entry)
          expect(
            yield* entries.findByEmailKey(emailKey(decodeEmail(`${unique("absent")}@example.com`)))
          ).toBeUndefined()
        })
      )

      it.effect("insertIfAbsent never overwrites, and the key ignores case in the whole address", () =>
        Effect.gen(function* () {
          const entries = yield* PlanEntries
          const local = unique("Mixed.Case")
          const first = entryFor(`${local}@Example.com`, "scrypt$first")
          const second = entryFor(`${local.toLowerCase()}@EXAMPLE.COM`, "scrypt$second")
          expect(second.emailKey).toBe(first.emailKey)
          expect(yield* entries.insertIfAbsent(first, [planEntryCreated(first)])).toBe(true)
          expect(yield* entries.insertIfAbsent(second, [planEntryCreated(second)])).toBe(false)
          expect(yield* entries.insertIfAbsent(first, [planEntryCreated(first)])).toBe(false)
          const stored = yield* entries.findByEmailKey(first.emailKey)
          expect(stored?.passwordHash).toBe("scrypt$first")
          expect(stored?.email).toBe(first.email)
        })
      )

      it.effect("concurrent inserts of one key store exactly one entry", () =>
        Effect.gen(function* () {
          const entries = yield* PlanEntries
          const address = `${unique("race")}@example.com`
          const attempts = Array.from({ length: 20 }, (_, index) =>
            Effect.suspend(() => {
              const entry = entryFor(address, `scrypt$attempt${index}`)
              return entries.insertIfAbsent(entry, [planEntryCreated(entry)])
            })
          )
          const inserted = yield* Effect.all(attempts, { concurrency: "unbounded" })
          expect(inserted.filter(Boolean)).toHaveLength(1)
          const winner = inserted.indexOf(true)
          const stored = yield* entries.findByEmailKey(emailKey(decodeEmail(address)))
          expect(stored?.passwordHash).toBe(`scrypt$attempt${winner}`)
        })
      )
    })

    describe("PreferencesStore", () => {
      it.effect("getOrCreate creates the defaults once, with createdAt = updatedAt = now", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          const created = yield* getOrCreate(userId, at(1))
          expect(created).toMatchObject({ language: "en", timezone: 0, mfaEnabled: false })
          expect(Number.isInteger(created.id) && created.id >= 1).toBe(true)
          expect(created.createdAt).toEqual(at(1))
          expect(created.updatedAt).toEqual(at(1))
          const again = yield* getOrCreate(userId, at(2))
          expect(again).toEqual(created)
        })
      )

      it.effect("concurrent first accesses of one user create one record", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          const records = yield* Effect.all(
            Array.from({ length: 20 }, () => getOrCreate(userId, at(1))),
            { concurrency: "unbounded" }
          )
          expect(new Set(records.map((record) => record.id)).size).toBe(1)
        })
      )

      it.effect("record ids are distinct per user and increase in order of creation", () =>
        Effect.gen(function* () {
          const first = yield* getOrCreate(freshUser(), at(1))
          const second = yield* getOrCreate(freshUser(), at(1))
          expect(second.id).toBeGreaterThan(first.id)
        })
      )

      it.effect("update creates the record when missing; createdAt = updatedAt even when the merge sets values", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          const stored = yield* update(userId, { language: LanguageTag.make("fr") }, at(3))
          expect(stored).toMatchObject({ language: "fr", timezone: 0, mfaEnabled: false })
          expect(stored.createdAt).toEqual(at(3))
          expect(stored.updatedAt).toEqual(at(3))
          expect(yield* getOrCreate(userId, at(4))).toEqual(stored)
        })
      )

      it.effect("update merges the values set, keeps the others, id and createdAt, and moves updatedAt", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          const created = yield* update(userId, { timezone: TimezoneOffset.make(-90) }, at(1))
          const stored = yield* update(userId, { mfaEnabled: true }, at(5))
          expect(stored).toEqual({ ...created, mfaEnabled: true, updatedAt: at(5) })
          expect(yield* getOrCreate(userId, at(6))).toEqual(stored)
        })
      )

      it.effect("update that changes no value changes nothing (updatedAt stays), as applyMerge says", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          const created = yield* getOrCreate(userId, at(1))
          expect(yield* update(userId, {}, at(9))).toEqual(created)
          const same = { language: created.language, timezone: created.timezone, mfaEnabled: created.mfaEnabled }
          expect(yield* update(userId, same, at(9))).toEqual(created)
          expect(yield* getOrCreate(userId, at(10))).toEqual(created)
          expect(applyMerge(PreferencesKind, created, { set: same, at: at(9) })).toBe(created)
        })
      )

      it.effect(
        "update never moves updatedAt backwards: an earlier instant than the stored one keeps the stored one",
        () =>
          Effect.gen(function* () {
            const userId = freshUser()
            yield* update(userId, { mfaEnabled: true }, at(40))
            const stored = yield* update(userId, { mfaEnabled: false }, at(35))
            expect(stored).toMatchObject({ mfaEnabled: false, updatedAt: at(40) })
          })
      )

      it.effect("concurrent merges of one user serialise: none is lost", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          yield* getOrCreate(userId, at(1))
          yield* Effect.all(
            [
              update(userId, { timezone: TimezoneOffset.make(750) }, at(2)),
              update(userId, { language: LanguageTag.make("de-CH") }, at(2)),
              update(userId, { mfaEnabled: true }, at(2))
            ],
            { concurrency: "unbounded", discard: true }
          )
          const final = yield* getOrCreate(userId, at(3))
          expect(final).toMatchObject({ timezone: 750, language: "de-CH", mfaEnabled: true, updatedAt: at(2) })
        })
      )

      it.effect(
        "update with a precondition: judged on the record as it is; unmet, PreconditionFailed and no write",
        () =>
          Effect.gen(function* () {
            const userId = freshUser()
            const created = yield* getOrCreate(userId, at(1))
            const refused = yield* Effect.flip(update(userId, { mfaEnabled: true }, at(2), () => false))
            expect(refused).toBeInstanceOf(PreconditionFailed)
            expect(yield* getOrCreate(userId, at(3))).toEqual(created)
            const seen: Array<Preferences> = []
            const stored = yield* update(userId, { mfaEnabled: true }, at(4), (current) => {
              seen.push(current)
              return true
            })
            expect(seen[0]).toEqual(created)
            expect(stored).toEqual({ ...created, mfaEnabled: true, updatedAt: at(4) })
          })
      )

      it.effect("conditional read-modify-write loops lose no update: of writers judging one version, one writes", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          yield* getOrCreate(userId, at(1))
          // Each increment reads, then writes only if the record is still the version it read (an If-Match), and
          // tries again when refused: 50 of them must land 20 increments.
          const increment = Effect.gen(function* () {
            for (;;) {
              const read = yield* getOrCreate(userId, at(2))
              const written = yield* Effect.result(
                update(userId, { timezone: TimezoneOffset.make(read.timezone + 15) }, at(2), (current) =>
                  sameVersion(PreferencesKind, current, read)
                )
              )
              if (written._tag === "Success") return
            }
          })
          yield* Effect.all(
            Array.from({ length: 20 }, () => increment),
            { concurrency: "unbounded", discard: true }
          )
          expect(yield* getOrCreate(userId, at(3))).toMatchObject({ timezone: 300 })
        })
      )

      it.effect("of concurrent conditional updates judging the same version, exactly one writes", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          const read = yield* getOrCreate(userId, at(1))
          const outcomes = yield* Effect.all(
            Array.from({ length: 20 }, (_, index) =>
              Effect.result(
                update(userId, { timezone: TimezoneOffset.make(15 * (index + 1)) }, at(2), (current) =>
                  sameVersion(PreferencesKind, current, read)
                )
              )
            ),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter((outcome) => outcome._tag === "Success")).toHaveLength(1)
        })
      )
    })

    describe("PaymentMethods", () => {
      it.effect("listByUser of a user with no methods is empty", () =>
        Effect.gen(function* () {
          expect(yield* listByUser(freshUser())).toEqual([])
        })
      )

      it.effect("listByUser orders by id in code-point order (not locale order)", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          const prefix = unique("ord")
          const ids = ["B", "a", "_", "-", "0"].map((suffix) => PaymentMethodId.make(prefix + suffix))
          yield* loadSeed({ payment_methods: ids.map((id) => ({ id, user_id: userId })) })
          const listed = (yield* listByUser(userId)).map((method) => method.id)
          expect(listed).toEqual(["-", "0", "B", "_", "a"].map((suffix) => prefix + suffix))
        })
      )

      it.effect("seeded methods belong to their user and start non-default unless seeded as default", () =>
        Effect.gen(function* () {
          const { userId, ids } = yield* seedUserWithMethods(3, 1)
          const listed = yield* listByUser(userId)
          expect(listed.map((method) => [method.id, method.userId, method.isDefault])).toEqual(
            [...ids].sort().map((id) => [id, userId, id === ids[1]])
          )
          for (const method of listed) expect(method.updatedAt).toEqual(method.createdAt)
        })
      )

      it.effect("setDefault on an unknown id is NotFound", () =>
        Effect.gen(function* () {
          const { userId } = yield* seedUserWithMethods(1)
          const error = yield* Effect.flip(setDefault(userId, freshMethodId(), at(1)))
          expect(error).toBeInstanceOf(NotFound)
          expect(error).toMatchObject({ _tag: "NotFound", resource: "payment_method" })
        })
      )

      it.effect("setDefault on another user's method is NotFound and leaves it untouched", () =>
        Effect.gen(function* () {
          const owner = yield* seedUserWithMethods(1)
          const intruder = yield* seedUserWithMethods(1)
          const ownersId = nth(owner.ids, 0)
          const before = yield* listByUser(owner.userId)
          const error = yield* Effect.flip(setDefault(intruder.userId, ownersId, at(1)))
          expect(error).toMatchObject({ _tag: "NotFound" })
          expect(yield* listByUser(owner.userId)).toEqual(before)
          expect(defaultsOf(yield* listByUser(intruder.userId))).toEqual([])
        })
      )

      it.effect("setDefault moves the default; both changed methods get updatedAt = now, others are untouched", () =>
        Effect.gen(function* () {
          const { userId, ids } = yield* seedUserWithMethods(3, 0)
          const [previousId, chosenId, bystanderId] = [nth(ids, 0), nth(ids, 1), nth(ids, 2)]
          const before = new Map((yield* listByUser(userId)).map((method) => [method.id, method]))
          const chosen = yield* setDefault(userId, chosenId, at(20))
          expect(chosen).toEqual({ ...before.get(chosenId), isDefault: true, updatedAt: at(20) })
          const after = new Map((yield* listByUser(userId)).map((method) => [method.id, method]))
          expect(after.get(chosenId)).toEqual(chosen)
          expect(after.get(previousId)).toEqual({ ...before.get(previousId), isDefault: false, updatedAt: at(20) })
          expect(after.get(bystanderId)).toEqual(before.get(bystanderId))
        })
      )

      it.effect(
        "setDefault never moves updatedAt backwards: an earlier instant than the stored one keeps the stored one",
        () =>
          Effect.gen(function* () {
            const { userId, ids } = yield* seedUserWithMethods(2)
            const [firstId, secondId] = [nth(ids, 0), nth(ids, 1)]
            expect((yield* setDefault(userId, firstId, at(40))).updatedAt).toEqual(at(40))
            // A call whose instant was taken before the previous one finished (it waited for the store's lock).
            const chosen = yield* setDefault(userId, secondId, at(35))
            expect(chosen).toMatchObject({ id: secondId, isDefault: true, updatedAt: at(35) })
            const previous = (yield* listByUser(userId)).find((method) => method.id === firstId)
            expect(previous).toMatchObject({ isDefault: false, updatedAt: at(40) })
          })
      )

      it.effect("setDefault is idempotent: the same method, the same updatedAt", () =>
        Effect.gen(function* () {
          const { userId, ids } = yield* seedUserWithMethods(2)
          const id = nth(ids, 0)
          const first = yield* setDefault(userId, id, at(30))
          const second = yield* setDefault(userId, id, at(31))
          expect(second).toEqual(first)
          expect(second.updatedAt).toEqual(at(30))
          expect(defaultsOf(yield* listByUser(userId))).toEqual([first])
        })
      )

      it.effect("at most one default at every instant under 200 concurrent setDefault calls", () =>
        Effect.gen(function* () {
          const { userId, ids } = yield* seedUserWithMethods(10)
          const observed: Array<number> = []
          const writers = Array.from({ length: 200 }, (_, index) =>
            Effect.map(setDefault(userId, nth(ids, (index * 7) % ids.length), at(40 + (index % 5))), (method) => {
              expect(method.isDefault).toBe(true)
            })
          )
          const readers = Array.from({ length: 100 }, () =>
            Effect.map(listByUser(userId), (methods) => {
              observed.push(defaultsOf(methods).length)
            })
          )
          // Interleave readers between writers so reads land while writes are in flight.
          const interleaved = writers.flatMap((writer, index) =>
            index % 2 === 0 ? [writer, nth(readers, index / 2)] : [writer]
          )
          yield* Effect.all(interleaved, { concurrency: "unbounded", discard: true })
          expect(observed).toHaveLength(100)
          expect(observed.filter((count) => count > 1)).toEqual([])
          const final = yield* listByUser(userId)
          expect(final).toHaveLength(10)
          expect(defaultsOf(final)).toHaveLength(1)
        })
      )
    })

    describe("seeds", () => {
      it.effect("loading the same seed twice adds nothing the second time", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          const seed: SeedInput = {
            users: [{ id: userId, token: freshToken() }],
            clients: [{ id: unique("client"), token: freshToken() }],
            payment_methods: [
              { id: freshMethodId(), user_id: userId, is_default: true },
              { id: freshMethodId(), user_id: userId }
            ]
          }
          expect(yield* loadSeed(seed)).toEqual({ credentialsAdded: 2, paymentMethodsAdded: 2 })
          const listed = yield* listByUser(userId)
          expect(yield* loadSeed(seed)).toEqual({ credentialsAdded: 0, paymentMethodsAdded: 0 })
          expect(yield* listByUser(userId)).toEqual(listed)
        })
      )

      it.effect("a seed never changes an existing row (what the API changed survives a reload)", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          const [first, second] = [freshMethodId(), freshMethodId()]
          const seed: SeedInput = {
            payment_methods: [
              { id: first, user_id: userId, is_default: true },
              { id: second, user_id: userId, is_default: false }
            ]
          }
          yield* loadSeed(seed)
          yield* setDefault(userId, second, at(50))
          const changed = yield* listByUser(userId)
          expect(yield* loadSeed(seed)).toEqual({ credentialsAdded: 0, paymentMethodsAdded: 0 })
          expect(yield* listByUser(userId)).toEqual(changed)
          expect(defaultsOf(changed).map((method) => method.id)).toEqual([second])
        })
      )

      it.effect("a seeded id that another user already has is left with its owner", () =>
        Effect.gen(function* () {
          const owner = yield* seedUserWithMethods(1)
          const id = nth(owner.ids, 0)
          const other = freshUser()
          expect(yield* loadSeed({ payment_methods: [{ id, user_id: other, is_default: true }] })).toEqual({
            credentialsAdded: 0,
            paymentMethodsAdded: 0
          })
          expect(yield* listByUser(other)).toEqual([])
          expect((yield* listByUser(owner.userId)).map((method) => method.id)).toEqual([id])
        })
      )

      it.effect("a seeded default keeps one default per user: an existing default stays", () =>
        Effect.gen(function* () {
          const { userId, ids } = yield* seedUserWithMethods(1, 0)
          const added = freshMethodId()
          expect(yield* loadSeed({ payment_methods: [{ id: added, user_id: userId, is_default: true }] })).toEqual({
            credentialsAdded: 0,
            paymentMethodsAdded: 1
          })
          const listed = yield* listByUser(userId)
          expect(listed).toHaveLength(2)
          expect(defaultsOf(listed).map((method) => method.id)).toEqual(ids)
        })
      )

      it.effect("two defaults for one user in one seed still leave exactly one default", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          yield* loadSeed({
            payment_methods: [
              { id: freshMethodId(), user_id: userId, is_default: true },
              { id: freshMethodId(), user_id: userId, is_default: true }
            ]
          })
          const listed = yield* listByUser(userId)
          expect(listed).toHaveLength(2)
          expect(defaultsOf(listed)).toHaveLength(1)
        })
      )
    })

    // docs/api.md, "Events": each write records its events in its own atomic step, a no-op none.
    describe("EventStore", () => {
      it.effect("a write that changes something records its event; a no-op records none", () =>
        Effect.gen(function* () {
          const { userId, ids } = yield* seedUserWithMethods(2)
          const [first, second] = [nth(ids, 0), nth(ids, 1)]
          yield* setDefault(userId, first, at(1))
          yield* setDefault(userId, first, at(2))
          yield* setDefault(userId, second, at(3))
          yield* update(userId, { timezone: TimezoneOffset.make(60) }, at(4))
          yield* update(userId, { timezone: TimezoneOffset.make(60) }, at(5))
          const events = yield* ownEvents(userId)
          expect(typesOf(events)).toEqual([
            "payment_method.default_changed",
            "payment_method.default_changed",
            "preferences.updated"
          ])
          expect(events.map((recorded) => recorded.event)).toEqual([
            {
              type: "payment_method.default_changed",
              userId,
              paymentMethodId: first,
              previousDefault: null,
              at: at(1)
            },
            {
              type: "payment_method.default_changed",
              userId,
              paymentMethodId: second,
              previousDefault: first,
              at: at(3)
            },
            {
              type: "preferences.updated",
              userId,
              changes: { timezone: { old: 0, new: 60 } },
              at: at(4)
            }
          ])
          // One subject per user: its sequence numbers the user's events 1, 2, 3, ... in order.
          expect(events.map((recorded) => [recorded.subject, recorded.sequence])).toEqual([
            [`users/${userId}`, 1],
            [`users/${userId}`, 2],
            [`users/${userId}`, 3]
          ])
          // Ids sort by creation.
          expect([...events.map((recorded) => recorded.id)].sort()).toEqual(events.map((recorded) => recorded.id))
        })
      )

      it.effect("a plan entry records one event, a second one with its address none; no digest in it", () =>
        Effect.gen(function* () {
          const entries = yield* PlanEntries
          const events = yield* EventStore
          const email = decodeEmail(`${unique("ev")}@Example.com`)
          const entry = {
            email,
            emailKey: emailKey(email),
            passwordHash: PasswordHash.make("scrypt$secret"),
            createdAt: at(0)
          }
          expect(yield* entries.insertIfAbsent(entry, [planEntryCreated(entry)])).toBe(true)
          expect(yield* entries.insertIfAbsent(entry, [planEntryCreated(entry)])).toBe(false)
          // The store's whole log, paged, holds exactly one event for this address.
          const mine: Array<RecordedEvent> = []
          let after: string | undefined
          for (;;) {
            const page: ReadonlyArray<RecordedEvent> = yield* events.list(after, 500)
            mine.push(...page.filter((recorded) => recorded.subject === `plan_entries/${entry.emailKey}`))
            const last = page.at(-1)
            if (last === undefined) break
            after = last.id
          }
          expect(mine.map((recorded) => recorded.event)).toEqual([{ type: "plan_entry.created", email, at: at(0) }])
          expect(JSON.stringify(mine)).not.toContain("scrypt$secret")
        })
      )

      it.effect("a page starts after its cursor; a cursor that is not the owner's is UnknownCursor", () =>
        Effect.gen(function* () {
          const { userId, ids } = yield* seedUserWithMethods(3)
          for (const [index, id] of ids.entries()) yield* setDefault(userId, id, at(10 + index))
          const all = yield* ownEvents(userId)
          expect(all).toHaveLength(3)
          expect(yield* ownEvents(userId, undefined, 2)).toEqual(all.slice(0, 2))
          expect(yield* ownEvents(userId, nth(all, 1).id)).toEqual(all.slice(2))
          expect(yield* ownEvents(userId, nth(all, 2).id)).toEqual([])
          const other = yield* seedUserWithMethods(1)
          const error = yield* Effect.flip(ownEvents(other.userId, nth(all, 0).id))
          expect(error).toBeInstanceOf(UnknownCursor)
        })
      )

      // One rule on every store (EventStore): a cursor is an id exactly as the store issued it. PostgreSQL's uuid
      // type reads other spellings of the same UUID (upper case, braces, no hyphens): not a cursor here either.
      it.effect("a cursor is the id as issued: another spelling of it, or no id at all, is UnknownCursor", () =>
        Effect.gen(function* () {
          const { userId, ids } = yield* seedUserWithMethods(2)
          for (const [index, id] of ids.entries()) yield* setDefault(userId, id, at(20 + index))
          const id = nth(yield* ownEvents(userId), 0).id
          expect(yield* ownEvents(userId, id)).toHaveLength(1)
          // Upper case changes only a hex letter: a fixed slice of a random id may hold digits alone (the id itself).
          const letter = id.search(/[a-f]/)
          const upperCased =
            letter === -1
              ? []
              : [id.toUpperCase(), `${id.slice(0, letter)}${id.charAt(letter).toUpperCase()}${id.slice(letter + 1)}`]
          const spellings = [...upperCased, `{${id}}`, id.replaceAll("-", ""), ` ${id}`, `${id}\n`, "not-an-id", ""]
          for (const after of spellings) {
            expect(yield* Effect.flip(ownEvents(userId, after)), JSON.stringify(after)).toBeInstanceOf(UnknownCursor)
            const all = yield* EventStore
            expect(yield* Effect.flip(all.list(after, 1)), JSON.stringify(after)).toBeInstanceOf(UnknownCursor)
          }
        })
      )

      it.effect("subscribe wakes the owner's reader after each write that records its event, until unsubscribed", () =>
        Effect.gen(function* () {
          const { userId } = yield* seedUserWithMethods(1)
          const events = yield* EventStore
          let wakes = 0
          const unsubscribe = yield* events.subscribe(userId, () => void wakes++)
          /** Polls until a wake-up came after `since` wake-ups, with a generous cap: never a judged duration. */
          const wokenAfter = (since: number) =>
            Effect.promise(async () => {
              for (let tries = 0; tries < 400 && wakes <= since; tries++)
                await new Promise((resolve) => setTimeout(resolve, 25))
              return wakes > since
            })
          yield* update(userId, { timezone: TimezoneOffset.make(15) }, at(70))
          expect(yield* wokenAfter(0), "woken after the first write").toBe(true)
          // The second proves the wake-up comes from the write itself (a notifying store's first may be its
          // connection's "read again").
          const before = wakes
          yield* update(userId, { timezone: TimezoneOffset.make(30) }, at(71))
          expect(yield* wokenAfter(before), "woken after the second write").toBe(true)
          unsubscribe()
        })
      )

      it.effect("concurrent changes of one user number their events without a gap or a repeat", () =>
        Effect.gen(function* () {
          const { userId, ids } = yield* seedUserWithMethods(4)
          yield* Effect.all(
            Array.from({ length: 12 }, (_, index) =>
              index % 2 === 0
                ? setDefault(userId, nth(ids, index % ids.length), at(60 + index))
                : update(userId, { timezone: TimezoneOffset.make(15 * index) }, at(60 + index))
            ),
            { concurrency: "unbounded" }
          )
          const events = yield* ownEvents(userId)
          expect(events.map((recorded) => recorded.sequence)).toEqual(events.map((_, index) => index + 1))
        })
      )
    })

    // docs/operations.md, "Events": each sink's deliveries have their own progress (claims, attempts, back-off).
    describe("EventStore deliveries", () => {
      it.effect("dispatch gives each new event a delivery per sink; each sink's claims and back-off are its own", () =>
        Effect.gen(function* () {
          const events = yield* EventStore
          yield* dispatchEverything(unique("earlier"))
          const { userId, ids } = yield* seedUserWithMethods(2)
          yield* setDefault(userId, nth(ids, 0), at(1))
          yield* setDefault(userId, nth(ids, 1), at(2))
          const [first, second] = (yield* ownEvents(userId)).map((recorded) => recorded.id)
          if (first === undefined || second === undefined) throw new Error("two events expected")
          // Counted with the two events pending: a delta of -1 is one of them settled.
          const before = yield* events.countByStatus
          const [a, b] = [unique("sink_a"), unique("sink_b")]
          expect(yield* dispatchEverything(a, b)).toBe(2)
          expect(yield* events.dispatch([a, b], 100)).toBe(0)
          const t0 = at(100)
          const lease = (from: Date) => new Date(from.getTime() + 60_000)

          const claimedA = yield* events.claimDue(a, t0, lease(t0), 100)
          expect(claimedA.map((delivery) => [delivery.recorded.id, delivery.sink, delivery.attempts])).toEqual([
            [first, a, 0],
            [second, a, 0]
          ])
          expect(claimedA.map((delivery) => delivery.since)).toEqual([at(1), at(2)])
          // Held by the claim: not handed out again until it ends; another sink's deliveries are its own.
          expect(yield* events.claimDue(a, t0, lease(t0), 100)).toEqual([])
          expect((yield* events.claimDue(b, t0, lease(t0), 100)).map((delivery) => delivery.recorded.id)).toEqual([
            first,
            second
          ])

          yield* events.settle(first, a, { status: "delivered", attempts: 1, nextAttemptAt: undefined })
          yield* events.settle(second, a, { status: "pending", attempts: 1, nextAttemptAt: at(160) })
          yield* events.settle(first, b, { status: "delivered", attempts: 1, nextAttemptAt: undefined })
          yield* events.settle(second, b, { status: "delivered", attempts: 1, nextAttemptAt: undefined })
          expect(yield* backlogOf(a)).toEqual({ sink: a, pending: 1, failed: 0 })
          expect(yield* backlogOf(b)).toBeUndefined()
          expect(delta(before, yield* events.countByStatus)).toEqual({ pending: -1, delivered: 1, failed: 0 })

          // Due at its next attempt, not before; a claim that ended (a deliverer that died) is taken again.
          expect(yield* events.claimDue(a, at(159), lease(at(159)), 100)).toEqual([])
          const retried = yield* events.claimDue(a, at(160), lease(at(160)), 100)
          expect(retried.map((delivery) => [delivery.recorded.id, delivery.attempts])).toEqual([[second, 1]])
          expect(yield* events.claimDue(a, at(160), lease(at(160)), 100)).toEqual([])
          const afterLease = new Date(lease(at(160)).getTime() + 1)
          expect((yield* events.claimDue(a, afterLease, lease(afterLease), 100)).map((d) => d.recorded.id)).toEqual([
            second
          ])

          // Given up: failed, kept; a late settlement of the same delivery changes nothing.
          yield* events.settle(second, a, { status: "failed", attempts: 2, nextAttemptAt: undefined })
          yield* events.settle(second, a, { status: "delivered", attempts: 3, nextAttemptAt: undefined })
          expect(yield* backlogOf(a)).toEqual({ sink: a, pending: 0, failed: 1 })
          expect(delta(before, yield* events.countByStatus)).toEqual({ pending: -2, delivered: 1, failed: 1 })

          // Replayed: pending again for the sink that gave it up only, due now, its attempts and clock anew.
          const replayedAt = at(500)
          expect(yield* events.replayFailed(replayedAt)).toBeGreaterThanOrEqual(1)
          expect(yield* backlogOf(a)).toEqual({ sink: a, pending: 1, failed: 0 })
          expect(delta(before, yield* events.countByStatus)).toEqual({ pending: -1, delivered: 1, failed: 0 })
          const again = yield* events.claimDue(a, replayedAt, lease(replayedAt), 100)
          expect(again.map((delivery) => [delivery.recorded.id, delivery.attempts, delivery.since])).toEqual([
            [second, 0, replayedAt]
          ])
          expect(yield* events.claimDue(b, replayedAt, lease(replayedAt), 100)).toEqual([])
          yield* events.settle(second, a, { status: "delivered", attempts: 1, nextAttemptAt: undefined })
          expect(delta(before, yield* events.countByStatus)).toEqual({ pending: -2, delivered: 2, failed: 0 })
        })
      )

      it.effect(
        "concurrent dispatches and claims hand out each delivery once; concurrent settlements count both sinks",
        () =>
          Effect.gen(function* () {
            const events = yield* EventStore
            yield* dispatchEverything(unique("earlier"))
            const { userId, ids } = yield* seedUserWithMethods(2)
            for (let index = 0; index < 20; index++) yield* setDefault(userId, nth(ids, index % 2), at(10 + index))
            const mine = (yield* ownEvents(userId)).map((recorded) => recorded.id)
            expect(mine).toHaveLength(20)
            const before = yield* events.countByStatus
            const [a, b] = [unique("sink_a"), unique("sink_b")]
            const dispatched = yield* Effect.all(
              Array.from({ length: 6 }, () => events.dispatch([a, b], 4)),
              { concurrency: "unbounded" }
            )
            expect(dispatched.reduce((sum, count) => sum + count, 0) + (yield* dispatchEverything(a, b))).toBe(20)
            const t0 = at(100)
            const claims = yield* Effect.all(
              [a, a, a, a, b, b, b, b].map((sink) => events.claimDue(sink, t0, at(101), 6)),
              { concurrency: "unbounded" }
            )
            const claimed = claims.flat().map((delivery) => `${delivery.sink} ${delivery.recorded.id}`)
            const rest = [
              ...(yield* events.claimDue(a, t0, at(101), 100)),
              ...(yield* events.claimDue(b, t0, at(101), 100))
            ].map((delivery) => `${delivery.sink} ${delivery.recorded.id}`)
            expect([...claimed, ...rest].sort()).toEqual(
              [...mine.map((id) => `${a} ${id}`), ...mine.map((id) => `${b} ${id}`)].sort()
            )
            yield* Effect.all(
              mine.flatMap((id) =>
                [a, b].map((sink) =>
                  events.settle(id, sink, { status: "delivered", attempts: 1, nextAttemptAt: undefined })
                )
              ),
              { concurrency: "unbounded" }
            )
            expect(delta(before, yield* events.countByStatus)).toEqual({ pending: -20, delivered: 20, failed: 0 })
            expect(yield* backlogOf(a)).toBeUndefined()
          })
      )

      it.effect(
        "retarget moves a removed sink's pending deliveries to the configured sinks, and keeps what was done",
        () =>
          Effect.gen(function* () {
            const events = yield* EventStore
            yield* dispatchEverything(unique("earlier"))
            const { userId, ids } = yield* seedUserWithMethods(2)
            for (let index = 0; index < 3; index++) yield* setDefault(userId, nth(ids, index % 2), at(30 + index))
            const [first, second, third] = (yield* ownEvents(userId)).map((recorded) => recorded.id)
            if (first === undefined || second === undefined || third === undefined) throw new Error("three events")
            const [kept, removed, added] = [unique("kept"), unique("removed"), unique("added")]
            yield* dispatchEverything(kept, removed)
            const delivered = { status: "delivered", attempts: 1, nextAttemptAt: undefined } as const
            // The first: done everywhere. The second: delivered to the removed sink only. The third: to the kept one only.
            yield* events.settle(first, kept, delivered)
            yield* events.settle(first, removed, delivered)
            yield* events.settle(second, removed, delivered)
            yield* events.settle(third, kept, delivered)
            yield* events.claimDue(removed, at(100), at(101), 100)
            const before = yield* events.countByStatus

            // The configuration is now `kept` and `added`: of these three, only the third had a pending delivery to the
            // removed sink (the earlier tests' sinks are not configured either: their pending deliveries move too).
            expect(yield* events.retarget([kept, added])).toBeGreaterThanOrEqual(1)
            expect(yield* events.retarget([kept, added])).toBe(0)
            expect(yield* backlogOf(removed)).toBeUndefined()
            const mine = new Set([first, second, third])
            const claimed = (sink: string) =>
              Effect.map(events.claimDue(sink, at(200), at(201), 10_000), (due) =>
                due
                  .filter((delivery) => mine.has(delivery.recorded.id))
                  .map((delivery) => [delivery.recorded.id, delivery.attempts, delivery.since])
              )
            expect(yield* claimed(added)).toEqual([[third, 0, at(32)]])
            expect(yield* claimed(kept)).toEqual([[second, 0, at(31)]])
            yield* events.settle(third, added, delivered)
            yield* events.settle(second, kept, delivered)
            expect(delta(before, yield* events.countByStatus)).toEqual({ pending: -2, delivered: 2, failed: 0 })
          })
      )

      it.effect("pruneDelivered removes delivered events older than its bound, never a pending or failed one", () =>
        Effect.gen(function* () {
          const events = yield* EventStore
          yield* dispatchEverything(unique("earlier"))
          const { userId, ids } = yield* seedUserWithMethods(2)
          for (let index = 0; index < 4; index++) yield* setDefault(userId, nth(ids, index % 2), at(20 + index))
          const mine = (yield* ownEvents(userId)).map((recorded) => recorded.id)
          const sink = unique("sink")
          yield* dispatchEverything(sink)
          const [delivered, failed, pending, recent] = mine
          const settle = (id: string | undefined, status: "delivered" | "failed") =>
            events.settle(id ?? "", sink, { status, attempts: 1, nextAttemptAt: undefined })
          yield* settle(delivered, "delivered")
          yield* settle(failed, "failed")
          yield* settle(recent, "delivered")
          // Older than at(23): the first three; of those, only the delivered one goes.
          let pruned = 0
          for (let removed = -1; removed !== 0; pruned += removed) removed = yield* events.pruneDelivered(at(23), 2)
          const left = (yield* ownEvents(userId)).map((recorded) => recorded.id)
          if (options.prunes) {
            expect(pruned).toBeGreaterThanOrEqual(1)
            expect(left).toEqual([failed, pending, recent])
          } else {
            expect(pruned).toBe(0)
            expect(left).toEqual(mine)
          }
          expect(yield* backlogOf(sink)).toEqual({ sink, pending: 1, failed: 1 })
        })
      )
    })

    describe("Authenticator", () => {
      it.effect("a user's token resolves to that user", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          const token = freshToken()
          yield* loadSeed({ users: [{ id: userId, token }] })
          expect(yield* authenticate(token)).toMatchObject({ _tag: "User", userId })
        })
      )

      it.effect("a client's token resolves to that client", () =>
        Effect.gen(function* () {
          const clientId = unique("client")
          const token = freshToken()
          yield* loadSeed({ clients: [{ id: clientId, token }] })
          expect(yield* authenticate(token)).toMatchObject({ _tag: "Client", clientId })
        })
      )

      it.effect("an unknown token is Unauthenticated(invalid_token)", () =>
        Effect.gen(function* () {
          const known = freshToken()
          yield* loadSeed({ users: [{ id: freshUser(), token: known }] })
          for (const token of [freshToken(), known + "x", known.slice(0, -1), known.toUpperCase()]) {
            const error = yield* Effect.flip(authenticate(token))
            expect(error).toBeInstanceOf(Unauthenticated)
            expect(error).toMatchObject({ _tag: "Unauthenticated", reason: "invalid_token" })
          }
        })
      )

      it.effect("a second token for a known user is added; the first keeps working", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          const [first, second] = [freshToken(), freshToken()]
          yield* loadSeed({ users: [{ id: userId, token: first }] })
          expect(yield* loadSeed({ users: [{ id: userId, token: second }] })).toEqual({
            credentialsAdded: 1,
            paymentMethodsAdded: 0
          })
          expect(yield* authenticate(first)).toMatchObject({ _tag: "User", userId })
          expect(yield* authenticate(second)).toMatchObject({ _tag: "User", userId })
        })
      )

      it.effect("a token already known is left as it is, even when a seed names another principal", () =>
        Effect.gen(function* () {
          const userId = freshUser()
          const token = freshToken()
          yield* loadSeed({ users: [{ id: userId, token }] })
          const report = yield* loadSeed({
            users: [{ id: freshUser(), token }],
            clients: [{ id: unique("client"), token }]
          })
          expect(report).toEqual({ credentialsAdded: 0, paymentMethodsAdded: 0 })
          expect(yield* authenticate(token)).toMatchObject({ _tag: "User", userId })
        })
      )
    })
  })
}
