import { randomBytes } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Cause, type Context, Effect, Exit, Fiber, Layer, Option, Schema, Scope } from "effect"
import {
  Authenticator,
  PaymentMethodId,
  PaymentMethods,
  PlanEntries,
  PreferencesStore,
  Seed,
  StoreAdmin,
  type StoreServices,
  TimezoneOffset,
  Unavailable,
  UserId
} from "@accord/domain"
import { startTcpProxy, viaProxy } from "@accord/test-support"
import {
  DatabaseTimeout,
  makePgPool,
  makePoolExecutor,
  PostgresStoreLive,
  type PostgresStoreOptions
} from "@accord/store-postgres"
import { diskFullTriggers, entryOf, isDiskFull } from "./disk-full.js"
import {
  adminQuery,
  databaseUrl,
  dropSchemaOnClose,
  freshSchema,
  skipReason,
  storeInFreshSchema
} from "./postgres-helpers.js"

const url = databaseUrl ?? ""
const target = (() => {
  const parsed = new URL(url || "postgres://127.0.0.1:5432")
  return { host: parsed.hostname, port: Number(parsed.port || 5432) }
})()

const unreachable = { _tag: "Unavailable", reason: "store_unreachable", retryAfterSeconds: 1 }
const hex = () => randomBytes(6).toString("hex")

/** A proxy in front of the database, stopped (outage over) when the scope closes. */
const proxyInFront = Effect.acquireRelease(
  Effect.promise(() => startTcpProxy(target)),
  (proxy) => Effect.promise(() => proxy.stop())
)

/**
 * A store through the proxy, in a fresh schema that is dropped (over a direct connection) afterwards; built in
 * `scope` when given (to time its close), else in the test's.
 */
const storeBehindProxy = (
  options: Omit<PostgresStoreOptions, "connectionString" | "schema"> = { poolSize: 4 },
  scope?: Scope.Closeable
) =>
  Effect.gen(function* () {
    const proxy = yield* proxyInFront
    const schema = freshSchema()
    yield* dropSchemaOnClose(url, schema)
    const layer = PostgresStoreLive({ connectionString: viaProxy(url, proxy), schema, ...options })
    const context = yield* scope === undefined ? Layer.build(layer) : Layer.buildWithScope(layer, scope)
    return { proxy, schema, context }
  })

/** A user and its token, seeded. */
const seededUser = (context: Context.Context<StoreServices>) =>
  Effect.gen(function* () {
    const userId = UserId.make(`u_${hex()}`)
    const token = `tok_${hex()}`
    const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: userId, token }] })
    yield* Effect.provide(
      Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(seed)),
      context
    )
    return { userId, token, seed }
  })

/** The typed failure of an exit, or the exit itself when it has none (so a mismatch shows what happened). */
const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | Exit.Exit<A, E> =>
  Exit.isFailure(exit) ? Option.getOrElse(Cause.findErrorOption(exit.cause), () => exit) : exit

/**
 * The query timeout of the stall and failover cases, short to keep them quick; the default is 5 s. A stalled database
 * never answers, so any answer at all is a timeout's: the cases check which by its cause and count, not by the clock.
 */
const QUERY_TIMEOUT_MS = 1000

/** One store call of each kind: single statements, a stored function, and transactions. */
const everyKindOfCall = (
  userId: UserId,
  token: string,
  seed: Seed
): Record<
  "ping" | "authenticate" | "list" | "preferences" | "seed",
  Effect.Effect<unknown, unknown, StoreServices>
> => {
  const now = new Date(Date.UTC(2030, 0, 1))
  return {
    ping: Effect.flatMap(StoreAdmin, (admin) => admin.ping),
    authenticate: Effect.flatMap(Authenticator, (auth) => auth.authenticate(token)),
    list: Effect.flatMap(PaymentMethods, (methods) => methods.listByUser(userId)),
    preferences: Effect.flatMap(PreferencesStore, (store) =>
      store.update(userId, { set: { timezone: TimezoneOffset.make(60) }, at: now })
    ),
    seed: Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(seed))
  }
}

/** Runs `call` with the store and says how it ended and how long it took. */
const timed = <A, E>(call: Effect.Effect<A, E, StoreServices>, context: Context.Context<StoreServices>) =>
  Effect.gen(function* () {
    const started = performance.now()
    const exit = yield* Effect.exit(Effect.provide(call, context))
    return { exit, ms: performance.now() - started }
  })

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `outage and recovery (skipped: ${skipReason})` : "outage and recovery",
  () => {
    it.live("a database that cannot be reached at start fails the layer with Unavailable(store_unreachable)", () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(
          Layer.build(PostgresStoreLive({ connectionString: "postgres://postgres@127.0.0.1:1/test" }))
        )
        expect(error).toBeInstanceOf(Unavailable)
        expect(error).toMatchObject(unreachable)
      }).pipe(Effect.scoped)
    )

    it.live("every port answers Unavailable during a cut and works again afterwards, with the same layer", () =>
      Effect.gen(function* () {
        const { proxy, context } = yield* storeBehindProxy()
        const userId = UserId.make(`u_${hex()}`)
        const token = `tok_${hex()}`
        const methodIds = [PaymentMethodId.make(`pm_a_${hex()}`), PaymentMethodId.make(`pm_b_${hex()}`)] as const
        const seed = Schema.decodeUnknownSync(Seed)({
          users: [{ id: userId, token }],
          payment_methods: methodIds.map((id) => ({ id, user_id: userId }))
        })
        const now = new Date(Date.UTC(2030, 0, 1))
        const calls = {
          ping: Effect.flatMap(StoreAdmin, (admin) => admin.ping),
          seed: Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(seed)),
          authenticate: Effect.flatMap(Authenticator, (auth) => auth.authenticate(token)),
          list: Effect.flatMap(PaymentMethods, (methods) => methods.listByUser(userId)),
          setDefault: Effect.flatMap(PaymentMethods, (methods) =>
            methods.setDefault(userId, methodIds[1], now, () => [])
          ),
          preferences: Effect.flatMap(PreferencesStore, (store) =>
            store.update(userId, { set: { timezone: TimezoneOffset.make(60) }, at: now })
          ),
          insert: Effect.flatMap(PlanEntries, (entries) => entries.insertIfAbsent(entryOf(`${hex()}@example.com`), []))
        }
        const probe = (call: Effect.Effect<unknown, unknown, StoreServices>) =>
          Effect.provide(Effect.exit(call), context)
        const all = Object.values(calls).map(probe)

        yield* Effect.provide(calls.seed, context)
        yield* Effect.promise(() => proxy.stop())
        for (const exit of yield* Effect.all(all, { concurrency: "unbounded" }))
          expect(failureOf(exit)).toMatchObject(unreachable)

        const acceptedBefore = proxy.accepted()
        yield* Effect.promise(() => proxy.start())
        for (const exit of yield* Effect.all(all, { concurrency: "unbounded" })) expect(exit._tag).toBe("Success")
        expect(proxy.accepted()).toBeGreaterThan(acceptedBefore)
        expect(yield* Effect.provide(calls.authenticate, context)).toMatchObject({ _tag: "User", userId })
        const listed = yield* Effect.provide(calls.list, context)
        expect(listed.filter((method) => method.isDefault).map((method) => method.id)).toEqual([methodIds[1]])
      }).pipe(Effect.scoped)
    )

    it.live("writes racing a flapping connection: failures are Unavailable, and no acknowledged write is lost", () =>
      Effect.gen(function* () {
        const { proxy, schema, context } = yield* storeBehindProxy()
        const acknowledged: Array<string> = []
        const failures: Array<unknown> = []
        const writer = (id: number) =>
          Effect.forEach(
            Array.from({ length: 60 }, (_, index) => index),
            (index) =>
              Effect.provide(
                Effect.flatMap(PlanEntries, (entries) => {
                  const entry = entryOf(`w${id}.${index}.${hex()}@example.com`)
                  return Effect.map(entries.insertIfAbsent(entry, []), (inserted) => {
                    if (inserted) acknowledged.push(entry.emailKey)
                  })
                }),
                context
              ).pipe(
                Effect.catchCause((cause) => Effect.sync(() => failures.push(Cause.squash(cause)))),
                Effect.tap(Effect.sleep("5 millis"))
              ),
            { discard: true }
          )
        // One user's counter, written 15, 30, 45, ... by a single fiber: the last acknowledged write (or a later one
        // whose answer was lost) must be the final value.
        const userId = UserId.make(`u_${hex()}`)
        let lastAcknowledged = 0
        let incrementsAttempted = 0
        const counter = Effect.forEach(
          Array.from({ length: 50 }, (_, index) => index),
          () =>
            Effect.provide(
              Effect.flatMap(PreferencesStore, (store) => {
                const attempt = ++incrementsAttempted
                return Effect.as(
                  store.update(userId, { set: { timezone: TimezoneOffset.make(attempt * 15) }, at: new Date() }),
                  attempt
                )
              }),
              context
            ).pipe(
              Effect.map((attempt) => {
                lastAcknowledged = attempt
              }),
              Effect.catchCause((cause) => Effect.sync(() => failures.push(Cause.squash(cause)))),
              Effect.tap(Effect.sleep("8 millis"))
            ),
          { discard: true }
        )
        const work = yield* Effect.forkChild(
          Effect.all([writer(1), writer(2), writer(3), counter], { concurrency: "unbounded" })
        )
        for (let cut = 0; cut < 3; cut++) {
          yield* Effect.sleep("80 millis")
          yield* Effect.promise(() => proxy.stop())
          yield* Effect.sleep("60 millis")
          yield* Effect.promise(() => proxy.start())
        }
        yield* Fiber.join(work)

        expect(failures.length).toBeGreaterThan(0)
        for (const failure of failures) expect(failure).toMatchObject(unreachable)
        expect(acknowledged.length).toBeGreaterThan(0)
        const stored = yield* Effect.promise(() =>
          adminQuery(url, `SELECT email_key FROM "${schema}".plan_entries WHERE email_key = ANY($1)`, [acknowledged])
        )
        expect(stored.rows.length).toBe(acknowledged.length)
        const counterRow = yield* Effect.promise(() =>
          adminQuery(url, `SELECT timezone FROM "${schema}".preferences WHERE user_id = $1`, [userId])
        )
        const final = (counterRow.rows[0]?.timezone ?? 0) / 15
        expect(final).toBeGreaterThanOrEqual(lastAcknowledged)
        expect(final).toBeLessThanOrEqual(incrementsAttempted)
        // With the database back, the same layer serves at once.
        yield* Effect.provide(
          Effect.flatMap(StoreAdmin, (admin) => admin.ping),
          context
        )
      }).pipe(Effect.scoped)
    )

    it.live(
      "a stalled database: every call fails Unavailable at the query timeout, and the layer closes all the same",
      () =>
        Effect.gen(function* () {
          const scope = yield* Scope.make()
          // Closed below, timed; this one is for a failure before that (closing twice is harmless).
          yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
          // No credentials cache: it would answer a token it saw before the stall without a statement.
          const { proxy, context } = yield* storeBehindProxy(
            { poolSize: 4, queryTimeoutMs: QUERY_TIMEOUT_MS, credentialCacheTtlMs: 0 },
            scope
          )
          const { userId, token, seed } = yield* seededUser(context)
          const calls = Object.values(everyKindOfCall(userId, token, seed))
          // Open connections first: the stall then catches statements on them, and, in the second round, new
          // connections whose handshake is never answered.
          for (const result of yield* Effect.all(
            calls.map((call) => timed(call, context)),
            { concurrency: "unbounded" }
          ))
            expect(result.exit._tag).toBe("Success")

          proxy.stall()
          for (let round = 0; round < 2; round++) {
            const results = yield* Effect.all(
              calls.map((call) => timed(call, context)),
              { concurrency: "unbounded" }
            )
            for (const { exit, ms } of results) {
              expect(failureOf(exit)).toMatchObject(unreachable)
              // At the query timeout, not before: the stall holds every statement (and handshake) until then.
              expect(ms).toBeGreaterThanOrEqual(QUERY_TIMEOUT_MS - 50)
            }
            expect(results.map(({ exit }) => (failureOf(exit) as Unavailable).cause)).toContainEqual(
              expect.any(DatabaseTimeout)
            )
          }

          // Closing does not wait for goodbyes a stalled server never sends: without the grace it never ends.
          yield* Scope.close(scope, Exit.void)
        }).pipe(Effect.scoped),
      20_000
    )

    it.live(
      "after a failover (open connections dead, new ones fine) each client fails at most twice, then is served again",
      () =>
        Effect.gen(function* () {
          const { proxy, context } = yield* storeBehindProxy({ queryTimeoutMs: QUERY_TIMEOUT_MS })
          const { userId, token, seed } = yield* seededUser(context)
          const { list, preferences } = everyKindOfCall(userId, token, seed)
          // The pool's ten connections open and idle, as a busy service has them between requests.
          yield* Effect.all(
            Array.from({ length: 20 }, () => Effect.provide(list, context)),
            { concurrency: "unbounded" }
          )

          proxy.stall()
          proxy.resume()
          // Two clients, one call after another each, until ten in a row succeed. Without the suspect connections
          // replaced at checkout, each of the ten dead ones would cost a call its timeout: up to ten failures.
          const client = (call: Effect.Effect<unknown, unknown, StoreServices>) =>
            Effect.gen(function* () {
              let failures = 0
              let succeededInARow = 0
              for (let sent = 0; sent < 40 && succeededInARow < 10; sent++) {
                const { exit } = yield* timed(call, context)
                if (Exit.isSuccess(exit)) succeededInARow += 1
                else {
                  expect(failureOf(exit)).toMatchObject(unreachable)
                  failures += 1
                  succeededInARow = 0
                }
                yield* Effect.sleep("20 millis")
              }
              return { failures, succeededInARow }
            })
          const clients = yield* Effect.all([client(list), client(preferences)], { concurrency: "unbounded" })
          const failures = clients.reduce((sum, outcome) => sum + outcome.failures, 0)
          expect(failures, "a dead connection was found at all").toBeGreaterThanOrEqual(1)
          for (const outcome of clients) {
            expect(outcome.failures).toBeLessThanOrEqual(2)
            expect(outcome.succeededInARow).toBe(10)
          }
        }).pipe(Effect.scoped),
      60_000
    )

    it.live(
      "a statement the server fails for a full disk (53100) is Unavailable(store_full), told to onStoreFull, never a defect",
      () =>
        Effect.gen(function* () {
          const told: Array<unknown> = []
          const { schema, layer } = storeInFreshSchema(url, { onStoreFull: (cause) => told.push(cause) })
          const context = yield* Layer.build(layer)
          const { userId } = yield* seededUser(context)
          const { entries, preferences } = yield* Effect.provide(
            Effect.all({ entries: PlanEntries, preferences: PreferencesStore }),
            context
          )
          const kept = entryOf("kept@example.com")
          expect(yield* entries.insertIfAbsent(kept, [])).toBe(true)
          const now = new Date(Date.UTC(2030, 0, 1))
          // The record first: the triggers fail an UPDATE that turns MFA on, and a merge on no record is an INSERT.
          yield* preferences.getOrCreate(userId, now)
          yield* Effect.promise(() => adminQuery(url, diskFullTriggers(schema)))

          // An INSERT, an UPSERT (the preferences merge), and a compare-and-set (a conditional merge).
          const insert = yield* Effect.flip(entries.insertIfAbsent(entryOf("full@example.com"), []))
          const merge = { set: { mfaEnabled: true }, at: now }
          const update = yield* Effect.flip(preferences.update(userId, merge))
          const conditional = yield* Effect.flip(preferences.update(userId, merge, () => true))
          for (const error of [insert, update, conditional]) {
            expect(error).toMatchObject({ _tag: "Unavailable", reason: "store_full", retryAfterSeconds: 1 })
            expect(isDiskFull(error.cause)).toBe(true)
          }
          expect(told).toHaveLength(3)
          expect(told.every(isDiskFull)).toBe(true)

          // The store serves on; once the disk has room (the triggers gone), the same writes are stored.
          expect(yield* entries.findByEmailKey(kept.emailKey)).toEqual(kept)
          yield* Effect.promise(() => adminQuery(url, `DROP FUNCTION "${schema}".accord_test_disk_full() CASCADE`))
          expect(yield* entries.insertIfAbsent(entryOf("full@example.com"), [])).toBe(true)
          const updated = yield* preferences.update(userId, merge)
          expect(updated.mfaEnabled).toBe(true)
        }).pipe(Effect.scoped)
    )

    it.live("a connection the server terminates (57P01) mid-query is Unavailable, and the pool replaces it", () =>
      Effect.gen(function* () {
        const applicationName = `accord_kill_${hex()}`
        const connectionString = `${url}${url.includes("?") ? "&" : "?"}application_name=${applicationName}`
        const executor = makePoolExecutor(yield* makePgPool({ connectionString, poolSize: 1 }))
        const sleeper = yield* Effect.forkChild(Effect.flip(executor.query("SELECT pg_sleep(30)")))
        // Wait until the statement runs on the server, then terminate its backend as an administrator would.
        yield* Effect.promise(async () => {
          for (;;) {
            const killed = await adminQuery(
              url,
              "SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'SELECT pg_sleep%'",
              [applicationName]
            )
            if (killed.rows.length > 0) return
            await new Promise((resolve) => setTimeout(resolve, 20))
          }
        })
        const error = yield* Fiber.join(sleeper)
        expect(error).toMatchObject(unreachable)
        expect(error.cause).toMatchObject({ code: "57P01" })
        expect(yield* executor.query("SELECT 1 AS one")).toEqual([{ one: 1 }])
        const transactional = yield* executor.transaction((tx) => tx.query("SELECT 2 AS two"))
        expect(transactional).toEqual([{ two: 2 }])
      }).pipe(Effect.scoped)
    )
  }
)
