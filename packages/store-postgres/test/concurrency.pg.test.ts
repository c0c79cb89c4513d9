import { randomBytes } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Layer, Latch, Schema } from "effect"
import {
  LanguageTag,
  PaymentMethodId,
  PaymentMethods,
  type PreferenceFields,
  type Preferences,
  PreferencesKind,
  preferencesMerge,
  PreferencesStore,
  sameVersion,
  Seed,
  StoreAdmin,
  TimezoneOffset,
  UserId
} from "@accord/domain"
import { makePgPool, makePoolExecutor, PostgresStoreLive } from "@accord/store-postgres"
import { lockUserDefaults } from "../src/payment-methods.js"
import { adminQuery, databaseUrl, dropSchemaOnClose, freshSchema, skipReason } from "./postgres-helpers.js"

const url = databaseUrl ?? ""
const PROCESSES = 4

/** Several stores on one schema, each with its own pool: as many separate processes sharing a database would be. */
const storesSharingOneSchema = Effect.gen(function* () {
  const schema = freshSchema()
  yield* dropSchemaOnClose(url, schema)
  const stores = yield* Effect.all(
    Array.from({ length: PROCESSES }, () =>
      Layer.build(PostgresStoreLive({ connectionString: url, schema, poolSize: 5 }))
    ),
    { concurrency: "unbounded" }
  )
  /** Store `index` round-robin, like requests spread over processes. */
  const store = (index: number) => {
    const context = stores[index % stores.length]
    if (context === undefined) throw new Error("no stores")
    return context
  }
  return { schema, store }
})

const defaultsIn = async (schema: string, userId: string) =>
  (await adminQuery(url, `SELECT id FROM "${schema}".payment_methods WHERE user_id = $1 AND is_default`, [userId])).rows

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `concurrency across pools (skipped: ${skipReason})` : "concurrency across pools",
  () => {
    it.live("200 concurrent setDefault calls spread over 4 pools all succeed and leave exactly one default", () =>
      Effect.gen(function* () {
        const { schema, store } = yield* storesSharingOneSchema
        const userId = UserId.make(`u_${randomBytes(6).toString("hex")}`)
        const ids = Array.from({ length: 8 }, (_, index) => PaymentMethodId.make(`pm_${index}`))
        const first = store(0)
        yield* Effect.provide(
          Effect.flatMap(StoreAdmin, (admin) =>
            admin.loadSeed(
              Schema.decodeUnknownSync(Seed)({ payment_methods: ids.map((id) => ({ id, user_id: userId })) })
            )
          ),
          first
        )
        const calls = Array.from({ length: 200 }, (_, index) =>
          Effect.provide(
            Effect.flatMap(PaymentMethods, (methods) =>
              methods.setDefault(
                userId,
                ids[(index * 5) % ids.length] ?? PaymentMethodId.make("pm_0"),
                new Date(Date.UTC(2030, 0, 1, 0, 0, 0, index)),
                () => []
              )
            ),
            store(index)
          )
        )
        const results = yield* Effect.all(calls, { concurrency: "unbounded" })
        expect(results.every((method) => method.isDefault && method.userId === userId)).toBe(true)
        expect(yield* Effect.promise(() => defaultsIn(schema, userId))).toHaveLength(1)
        const listed = yield* Effect.provide(
          Effect.flatMap(PaymentMethods, (methods) => methods.listByUser(userId)),
          first
        )
        expect(listed.filter((method) => method.isDefault)).toHaveLength(1)
        expect(listed).toHaveLength(ids.length)
      }).pipe(Effect.scoped)
    )

    it.live("setDefault waits for the per-user lock the seed takes, held by a transaction on another pool", () =>
      Effect.gen(function* () {
        const { schema, store } = yield* storesSharingOneSchema
        const userId = UserId.make(`u_${randomBytes(6).toString("hex")}`)
        const id = PaymentMethodId.make("pm_locked")
        yield* Effect.provide(
          Effect.flatMap(StoreAdmin, (admin) =>
            admin.loadSeed(Schema.decodeUnknownSync(Seed)({ payment_methods: [{ id, user_id: userId }] }))
          ),
          store(0)
        )
        const other = makePoolExecutor(yield* makePgPool({ connectionString: url, schema, poolSize: 1 }))
        const locked = yield* Latch.make(false)
        const release = yield* Latch.make(false)
        // Scoped forks: interrupted when the scope closes, before the pool they hold a connection of is ended.
        const holder = yield* Effect.forkScoped(
          other.transaction((tx) =>
            lockUserDefaults(tx, userId).pipe(Effect.andThen(locked.open), Effect.andThen(release.await))
          )
        )
        yield* locked.await
        const waiting = yield* Effect.forkScoped(
          Effect.provide(
            Effect.flatMap(PaymentMethods, (methods) =>
              methods.setDefault(userId, id, new Date(Date.UTC(2030, 0, 1)), () => [])
            ),
            store(1)
          )
        )
        yield* Effect.sleep("300 millis")
        expect(waiting.pollUnsafe()).toBeUndefined()
        yield* release.open
        yield* Fiber.join(holder)
        expect(yield* Fiber.join(waiting)).toMatchObject({ id, userId, isDefault: true })
      }).pipe(Effect.scoped)
    )

    it.live("concurrent preference merges of one user over 4 pools serialise: no update is lost", () =>
      Effect.gen(function* () {
        const { store } = yield* storesSharingOneSchema
        const userId = UserId.make(`u_${randomBytes(6).toString("hex")}`)
        const now = new Date(Date.UTC(2030, 0, 1))
        const update = (
          index: number,
          set: Partial<PreferenceFields>,
          precondition?: (current: Preferences) => boolean
        ) =>
          Effect.provide(
            Effect.flatMap(PreferencesStore, (preferences) =>
              preferences.update(userId, { set, at: now }, precondition)
            ),
            store(index)
          )
        // Read-modify-write increments, each a conditional merge on the version it read (an If-Match), retried when
        // refused: 24 increments of 15 minutes take the offset from 0 to 360 only if none is lost. Beside them, plain
        // merges of the other fields from other pools.
        const increment = (index: number) =>
          Effect.gen(function* () {
            for (;;) {
              const read = yield* Effect.provide(
                Effect.flatMap(PreferencesStore, (preferences) => preferences.getOrCreate(userId, now)),
                store(index)
              )
              const written = yield* Effect.result(
                update(index, { timezone: TimezoneOffset.make(read.timezone + 15) }, (current) =>
                  sameVersion(PreferencesKind, current, read)
                )
              )
              if (written._tag === "Success") return
            }
          })
        const increments = Array.from({ length: 24 }, (_, index) => increment(index))
        const others = [update(1, { language: LanguageTag.make("pt-BR") }), update(2, { mfaEnabled: true })]
        yield* Effect.all([...increments, ...others], { concurrency: "unbounded", discard: true })
        const final = yield* Effect.provide(
          Effect.flatMap(PreferencesStore, (preferences) => preferences.getOrCreate(userId, now)),
          store(2)
        )
        expect(final).toMatchObject({ timezone: 360, language: "pt-BR", mfaEnabled: true })
      }).pipe(Effect.scoped)
    )

    // docs/SECURITY.md, "updated_at goes backwards": each call's instant is taken before the lock, so the order the
    // calls get the lock in is not the order of their instants. Here the instants are deliberately scrambled.
    it.live("updated_at never goes backwards under concurrent writes with instants taken before the lock", () =>
      Effect.gen(function* () {
        const { store } = yield* storesSharingOneSchema
        const userId = UserId.make(`u_${randomBytes(6).toString("hex")}`)
        const instant = (index: number) => new Date(Date.UTC(2030, 0, 1, 0, 0, 0, (index * 37) % 200))
        const updates = Array.from({ length: 200 }, (_, index) =>
          Effect.provide(
            Effect.flatMap(PreferencesStore, (preferences) =>
              preferences.update(
                userId,
                preferencesMerge(
                  { timezone: TimezoneOffset.make(index % 2 === 0 ? 60 : 120), mfaEnabled: index % 3 === 0 },
                  instant(index)
                ),
                // Every other one conditional (always met): the compare-and-set path must not go backwards either.
                index % 2 === 0 ? undefined : () => true
              )
            ),
            store(index)
          )
        )
        const answers = yield* Effect.all(updates, { concurrency: "unbounded" })
        const final = yield* Effect.provide(
          Effect.flatMap(PreferencesStore, (preferences) => preferences.getOrCreate(userId, instant(0))),
          store(0)
        )
        const later = answers.filter((answer) => answer.updatedAt.getTime() > final.updatedAt.getTime())
        expect(later, "answers stamped later than the final record").toEqual([])

        const ids = Array.from({ length: 4 }, (_, index) => PaymentMethodId.make(`pm_${index}`))
        yield* Effect.provide(
          Effect.flatMap(StoreAdmin, (admin) =>
            admin.loadSeed(
              Schema.decodeUnknownSync(Seed)({ payment_methods: ids.map((id) => ({ id, user_id: userId })) })
            )
          ),
          store(0)
        )
        const calls = Array.from({ length: 200 }, (_, index) =>
          Effect.provide(
            Effect.flatMap(PaymentMethods, (methods) =>
              methods.setDefault(
                userId,
                ids[index % ids.length] ?? PaymentMethodId.make("pm_0"),
                instant(index),
                () => []
              )
            ),
            store(index)
          )
        )
        const chosen = yield* Effect.all(calls, { concurrency: "unbounded" })
        const listed = yield* Effect.provide(
          Effect.flatMap(PaymentMethods, (methods) => methods.listByUser(userId)),
          store(0)
        )
        const newest = Math.max(...listed.map((method) => method.updatedAt.getTime()))
        expect(
          chosen.filter((method) => method.updatedAt.getTime() > newest),
          "answers stamped later than every stored method"
        ).toEqual([])
      }).pipe(Effect.scoped)
    )

    it.live("concurrent first reads of one user over 4 pools create one record", () =>
      Effect.gen(function* () {
        const { schema, store } = yield* storesSharingOneSchema
        const userId = UserId.make(`u_${randomBytes(6).toString("hex")}`)
        const now = new Date(Date.UTC(2030, 0, 1))
        const reads = Array.from({ length: 40 }, (_, index) =>
          Effect.provide(
            Effect.flatMap(PreferencesStore, (store) => store.getOrCreate(userId, now)),
            store(index)
          )
        )
        const records = yield* Effect.all(reads, { concurrency: "unbounded" })
        expect(new Set(records.map((record) => record.id)).size).toBe(1)
        const rows = yield* Effect.promise(() =>
          adminQuery(url, `SELECT count(*)::int AS n FROM "${schema}".preferences WHERE user_id = $1`, [userId])
        )
        expect(rows.rows).toEqual([{ n: 1 }])
      }).pipe(Effect.scoped)
    )
  }
)
