import { PGlite } from "@electric-sql/pglite"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Schema } from "effect"
import { TestClock } from "effect/testing"
import {
  Authenticator,
  LanguageTag,
  PaymentMethodId,
  PaymentMethods,
  PreferencesStore,
  Seed,
  StoreAdmin,
  type StoreServices,
  Unauthenticated,
  TimezoneOffset,
  UserId
} from "@accord/domain"
import {
  DEFAULT_CREDENTIAL_CACHE_TTL_MS,
  makePgliteExecutor,
  oneCallQueries,
  SqlStoreLive,
  type SqlExecutor
} from "@accord/store-postgres"

const userId = UserId.make("u_round_trips")
const token = "round-trips-token.4f1c"
const methodIds = [PaymentMethodId.make("pm_rt_a"), PaymentMethodId.make("pm_rt_b")]
const now = new Date(Date.UTC(2030, 0, 1))

/** An executor that counts the statements it is given (each one round trip to PostgreSQL), transactions included. */
const counting = (inner: SqlExecutor) => {
  const counter = { statements: 0 }
  const executor: SqlExecutor = {
    query: (text, params) => Effect.suspend(() => (counter.statements++, inner.query(text, params))),
    transaction: (body) =>
      inner.transaction((tx) =>
        Effect.suspend(() => {
          counter.statements += 2 // BEGIN and COMMIT
          return body({ query: (text, params) => Effect.suspend(() => (counter.statements++, tx.query(text, params))) })
        })
      )
  }
  return { executor, counter }
}

/** A PGlite store whose executor counts, seeded with one user, its token and two payment methods. */
const countedStore = (ttlMs?: number) =>
  Effect.gen(function* () {
    const db = yield* Effect.acquireRelease(
      Effect.promise(() => PGlite.create()),
      (open) => Effect.promise(() => open.close())
    )
    const { executor, counter } = counting(yield* makePgliteExecutor(oneCallQueries(db)))
    const context = yield* Layer.build(
      SqlStoreLive(executor, undefined, ttlMs === undefined ? {} : { credentialCacheTtlMs: ttlMs })
    )
    yield* Effect.provide(
      Effect.flatMap(StoreAdmin, (admin) =>
        admin.loadSeed(
          Schema.decodeUnknownSync(Seed)({
            users: [{ id: userId, token }],
            payment_methods: methodIds.map((id) => ({ id, user_id: userId }))
          })
        )
      ),
      context
    )
    /** The statements `effect` sent. */
    const statementsOf = <A, E>(effect: Effect.Effect<A, E, StoreServices>) =>
      Effect.gen(function* () {
        const before = counter.statements
        yield* Effect.provide(effect, context)
        return counter.statements - before
      })
    const authenticate = Effect.provide(
      Effect.flatMap(Authenticator, (authenticator) => authenticator.authenticate(token)),
      context
    )
    /** The same database as another process sees it: a store of its own (its own turns) over the same executor. */
    const otherProcess = Layer.build(SqlStoreLive(executor))
    return { db, context, counter, otherProcess, statementsOf, authenticate }
  })

const preferences = <A, E>(use: (store: PreferencesStore["Service"]) => Effect.Effect<A, E>) =>
  Effect.flatMap(PreferencesStore, use)

describe("round trips to the database (issue 29: at most two per write, one per read, credentials cached)", () => {
  it.effect(
    "each store call sends this many statements",
    () =>
      Effect.gen(function* () {
        const { statementsOf } = yield* countedStore()
        const merge = { set: { language: LanguageTag.make("fr") }, at: now }
        expect(yield* statementsOf(preferences((store) => store.getOrCreate(userId, now)))).toBe(1)
        // Every write that may record an event (docs/api.md, "Events") reads the record, then writes it and its event in
        // one compare-and-set statement: two round trips.
        expect(yield* statementsOf(preferences((store) => store.update(userId, merge)))).toBe(2)
        // A conditional write: the read its precondition is judged on, then the compare-and-set.
        const mergeIf = { set: { language: LanguageTag.make("de") }, at: now }
        expect(yield* statementsOf(preferences((store) => store.update(userId, mergeIf, () => true)))).toBe(2)
        // Nothing to change: the read only.
        expect(yield* statementsOf(preferences((store) => store.update(userId, mergeIf, () => true)))).toBe(1)
        expect(yield* statementsOf(Effect.flatMap(PaymentMethods, (methods) => methods.listByUser(userId)))).toBe(1)
        const [first] = methodIds
        if (first === undefined) throw new Error("no method")
        expect(
          yield* statementsOf(
            Effect.flatMap(PaymentMethods, (methods) => methods.setDefault(userId, first, now, () => []))
          )
        ).toBe(2)
        expect(
          yield* statementsOf(
            Effect.flatMap(PaymentMethods, (methods) =>
              methods.setDefault(
                userId,
                first,
                now,
                () => [],
                () => true
              )
            )
          )
        ).toBeLessThanOrEqual(2)
        const authenticate = Effect.flatMap(Authenticator, (auth) => auth.authenticate(token))
        expect(yield* statementsOf(authenticate)).toBe(1)
        expect(yield* statementsOf(authenticate)).toBe(0)
      }).pipe(Effect.scoped),
    // Statements counted, never timed: a busy machine (40 s seen at a load of 20) must not fail it.
    300_000
  )
})

describe('round trips under contention (issue 36; docs/operations.md, "Writes under contention")', () => {
  const setTimezone = (index: number) =>
    preferences((store) => store.update(userId, { set: { timezone: TimezoneOffset.make((index + 1) * 15) }, at: now }))

  it.effect(
    "fifty concurrent writes of one record in one process: the first reads, each other one is one statement",
    () =>
      Effect.gen(function* () {
        const { statementsOf } = yield* countedStore()
        yield* statementsOf(preferences((store) => store.getOrCreate(userId, now)))
        // The writers queue in the record's turn, each leaving the next the record it wrote: no retry, no read.
        const writes = Array.from({ length: 50 }, (_, index) => setTimezone(index))
        const written = yield* statementsOf(Effect.all(writes, { concurrency: "unbounded" }))
        expect(written).toBe(51)
      }).pipe(Effect.scoped)
  )

  it.effect(
    "writers of one record in two processes: at most six statements a write, seven a set-default, none lost",
    () =>
      Effect.gen(function* () {
        const { db, context, counter, otherProcess } = yield* countedStore()
        const other = yield* otherProcess
        const on = (index: number) => (index % 2 === 0 ? context : other)
        const writes = 40
        const before = counter.statements
        const answers = yield* Effect.all(
          Array.from({ length: writes }, (_, index) => Effect.provide(setTimezone(index), on(index))),
          { concurrency: "unbounded" }
        )
        expect(counter.statements - before).toBeLessThanOrEqual(6 * writes)
        // Every write applied (each its own value), each with its event, numbered without a gap.
        expect(answers.map((answer) => answer.timezone)).toEqual(
          Array.from({ length: writes }, (_, index) => (index + 1) * 15)
        )
        const events = yield* Effect.promise(() =>
          db.query<{ count: number; max: number }>(
            "SELECT count(*)::int AS count, max(sequence)::int AS max FROM events WHERE owner = $1",
            [userId]
          )
        )
        expect(events.rows[0]).toEqual({ count: writes, max: writes })

        const calls = 40
        const beforeDefaults = counter.statements
        yield* Effect.all(
          Array.from({ length: calls }, (_, index) =>
            Effect.provide(
              Effect.flatMap(PaymentMethods, (methods) =>
                methods.setDefault(
                  userId,
                  methodIds[index % methodIds.length] ?? PaymentMethodId.make("pm_rt_a"),
                  now,
                  () => []
                )
              ),
              on(index)
            )
          ),
          { concurrency: "unbounded" }
        )
        expect(counter.statements - beforeDefaults).toBeLessThanOrEqual(7 * calls)
        const defaults = yield* Effect.promise(() =>
          db.query("SELECT id FROM payment_methods WHERE user_id = $1 AND is_default", [userId])
        )
        expect(defaults.rows).toHaveLength(1)
      }).pipe(Effect.scoped)
  )
})

describe('the credentials cache (docs/operations.md, "Revoking a token")', () => {
  it.effect("a known token costs one query per TTL; a deleted one stops working once its entry expires", () =>
    Effect.gen(function* () {
      const { db, statementsOf, authenticate } = yield* countedStore()
      const authenticateOnce = Effect.flatMap(Authenticator, (auth) => auth.authenticate(token))
      expect(yield* statementsOf(authenticateOnce)).toBe(1)
      expect(yield* statementsOf(authenticateOnce)).toBe(0)
      yield* Effect.promise(() => db.query("DELETE FROM credentials"))
      // Within the TTL the revoked token still works: the revocation delay, stated in docs/operations.md.
      yield* TestClock.adjust(DEFAULT_CREDENTIAL_CACHE_TTL_MS - 1)
      expect(yield* authenticate).toMatchObject({ _tag: "User", userId })
      yield* TestClock.adjust(1)
      expect(yield* Effect.flip(authenticate)).toEqual(new Unauthenticated({ reason: "invalid_token" }))
    }).pipe(Effect.scoped)
  )

  it.effect("an unknown token is not remembered: seeded afterwards, it works at once", () =>
    Effect.gen(function* () {
      const { db, authenticate } = yield* countedStore()
      yield* Effect.promise(() => db.query("DELETE FROM credentials"))
      expect(yield* Effect.flip(authenticate)).toEqual(new Unauthenticated({ reason: "invalid_token" }))
      yield* Effect.promise(() =>
        db.query(
          "INSERT INTO credentials (token_digest, kind, principal_id) VALUES (encode(sha256($1), 'hex'), 'user', $2)",
          [new TextEncoder().encode(token), userId]
        )
      )
      expect(yield* authenticate).toMatchObject({ _tag: "User", userId })
    }).pipe(Effect.scoped)
  )

  it.effect("with a TTL of 0 every authentication asks the database, and a deletion is seen at once", () =>
    Effect.gen(function* () {
      const { db, statementsOf, authenticate } = yield* countedStore(0)
      const authenticateOnce = Effect.flatMap(Authenticator, (auth) => auth.authenticate(token))
      expect(yield* statementsOf(authenticateOnce)).toBe(1)
      expect(yield* statementsOf(authenticateOnce)).toBe(1)
      yield* Effect.promise(() => db.query("DELETE FROM credentials"))
      expect(yield* Effect.flip(authenticate)).toEqual(new Unauthenticated({ reason: "invalid_token" }))
    }).pipe(Effect.scoped)
  )
})
