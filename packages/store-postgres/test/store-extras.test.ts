import { randomBytes } from "node:crypto"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Result, Schema } from "effect"
import {
  Email,
  emailKey,
  LanguageTag,
  PasswordHash,
  PaymentMethodId,
  PaymentMethods,
  PlanEntries,
  PreferencesStore,
  Seed,
  StoreAdmin,
  type StoreServices,
  UserId
} from "@accord/domain"
import { PgliteStoreLive } from "@accord/store-postgres"
import { databaseUrl, skipReason, storeInFreshSchema } from "./postgres-helpers.js"

const hex = () => randomBytes(6).toString("hex")
const freshUser = () => UserId.make(`u_${hex()}`)
const loadSeed = (input: typeof Seed.Encoded) =>
  Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(Schema.decodeUnknownSync(Seed)(input)))
const listByUser = (userId: UserId) => Effect.flatMap(PaymentMethods, (methods) => methods.listByUser(userId))

/** Instants with a millisecond part, which a column of lower precision (or a float) would lose. */
const created = new Date("2030-01-01T00:00:00.123Z")
const changed = new Date("2030-01-01T00:00:01.999Z")

/** What the contract leaves to each store and PostgreSQL makes easy to get wrong. */
const runExtras = (name: string, storeLayer: Layer.Layer<StoreServices, unknown>) =>
  layer(storeLayer, { excludeTestServices: true })(`postgres specifics: ${name}`, (it) => {
    it.effect("preferences keep millisecond timestamps through a round trip", () =>
      Effect.gen(function* () {
        const store = yield* PreferencesStore
        const userId = freshUser()
        const first = yield* store.getOrCreate(userId, created)
        expect(first.createdAt.toISOString()).toBe("2030-01-01T00:00:00.123Z")
        const updated = yield* store.update(userId, { set: { mfaEnabled: true }, at: changed })
        const read = yield* store.getOrCreate(userId, new Date())
        expect(read).toEqual(updated)
        expect(read.updatedAt.toISOString()).toBe("2030-01-01T00:00:01.999Z")
        expect(read.createdAt.toISOString()).toBe("2030-01-01T00:00:00.123Z")
      })
    )

    it.effect("payment methods and plan entries keep millisecond timestamps", () =>
      Effect.gen(function* () {
        const userId = freshUser()
        const id = PaymentMethodId.make(`pm_${hex()}`)
        yield* loadSeed({ payment_methods: [{ id, user_id: userId }] })
        const chosen = yield* Effect.flatMap(PaymentMethods, (methods) =>
          methods.setDefault(userId, id, changed, () => [])
        )
        expect(yield* listByUser(userId)).toEqual([chosen])
        expect(chosen.updatedAt.toISOString()).toBe("2030-01-01T00:00:01.999Z")
        const email = Schema.decodeUnknownSync(Email)(`${hex()}@example.com`)
        const entry = {
          email,
          emailKey: emailKey(email),
          passwordHash: PasswordHash.make("scrypt$x"),
          createdAt: created
        }
        const entries = yield* PlanEntries
        yield* entries.insertIfAbsent(entry, [])
        expect(yield* entries.findByEmailKey(entry.emailKey)).toEqual(entry)
      })
    )

    it.effect("a precondition that throws writes nothing, and the store keeps working", () =>
      Effect.gen(function* () {
        const store = yield* PreferencesStore
        const userId = freshUser()
        const before = yield* store.update(userId, { set: { language: LanguageTag.make("fr") }, at: created })
        const exit = yield* Effect.exit(
          store.update(userId, { set: { mfaEnabled: true }, at: changed }, () => {
            throw new Error("bug in the precondition")
          })
        )
        expect(Exit.isFailure(exit) && Result.isSuccess(Cause.findDefect(exit.cause))).toBe(true)
        expect(yield* store.getOrCreate(userId, changed)).toEqual(before)
        // The connection went back clean (not stuck in an aborted transaction): later work on it commits.
        for (let round = 0; round < 3; round++) {
          const next = yield* store.update(userId, { set: { mfaEnabled: round % 2 === 0 }, at: changed })
          expect(next.mfaEnabled).toBe(round % 2 === 0)
        }
      })
    )

    it.effect("a NotFound inside setDefault rolls back and leaves the connection usable", () =>
      Effect.gen(function* () {
        const userId = freshUser()
        const id = PaymentMethodId.make(`pm_${hex()}`)
        yield* loadSeed({ payment_methods: [{ id, user_id: userId }] })
        for (let round = 0; round < 3; round++) {
          const error = yield* Effect.flip(
            Effect.flatMap(PaymentMethods, (methods) =>
              methods.setDefault(userId, PaymentMethodId.make(`pm_${hex()}`), changed, () => [])
            )
          )
          expect(error._tag).toBe("NotFound")
        }
        const chosen = yield* Effect.flatMap(PaymentMethods, (methods) =>
          methods.setDefault(userId, id, changed, () => [])
        )
        expect(chosen.isDefault).toBe(true)
      })
    )
  })

runExtras("pglite", PgliteStoreLive())

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `postgres (skipped: ${skipReason})` : "postgres",
  () => {
    // One connection: a transaction left open or aborted would show up in the very next test.
    runExtras("node-postgres, one connection", storeInFreshSchema(databaseUrl ?? "", { poolSize: 1 }).layer)
  }
)

describe("PgliteStoreLive on a data directory", () => {
  it.live(
    "keeps its data across a close and a reopen, and migrating again applies nothing",
    () =>
      Effect.gen(function* () {
        const dataDir = yield* Effect.acquireRelease(
          Effect.promise(() => mkdtemp(join(tmpdir(), "accord-pglite-"))),
          (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
        )
        const userId = freshUser()
        const id = PaymentMethodId.make(`pm_${hex()}`)
        const token = `tok_${hex()}`
        const firstRun = Effect.gen(function* () {
          yield* loadSeed({ users: [{ id: userId, token }], payment_methods: [{ id, user_id: userId }] })
          return yield* Effect.flatMap(PaymentMethods, (methods) => methods.setDefault(userId, id, changed, () => []))
        })
        const chosen = yield* Effect.scoped(Effect.provide(firstRun, PgliteStoreLive({ dataDir })))
        const secondRun = Effect.gen(function* () {
          expect(yield* loadSeed({ users: [{ id: userId, token }] })).toEqual({
            credentialsAdded: 0,
            paymentMethodsAdded: 0
          })
          return yield* listByUser(userId)
        })
        expect(yield* Effect.scoped(Effect.provide(secondRun, PgliteStoreLive({ dataDir })))).toEqual([chosen])
      }).pipe(Effect.scoped),
    60_000
  )
})
