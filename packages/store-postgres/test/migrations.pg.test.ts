import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Result } from "effect"
import {
  applyMigrations,
  InvalidSchemaName,
  makePgPool,
  makePoolExecutor,
  migrations,
  PostgresStoreLive
} from "@accord/store-postgres"
import { adminQuery, databaseUrl, dropSchemaOnClose, freshSchema, skipReason } from "./postgres-helpers.js"

const url = databaseUrl ?? ""
const latest = Math.max(...migrations.map((migration) => migration.version))

const executorFor = (schema: string) =>
  Effect.map(makePgPool({ connectionString: url, schema, poolSize: 2 }), makePoolExecutor)

/** Every table the migrations create, and the table of applied versions: what a fresh schema holds after them. */
const createdTables = [
  "accord_migrations",
  ...migrations
    .flatMap((migration) => migration.statements)
    .flatMap((statement) => /^\s*CREATE TABLE\s+(?:IF NOT EXISTS\s+)?(\w+)/i.exec(statement)?.[1] ?? [])
].sort()

const tablesIn = async (schema: string) =>
  (
    await adminQuery(
      url,
      'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name COLLATE "C"',
      [schema]
    )
  ).rows.map((row: { table_name: string }) => row.table_name)

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `migrations (skipped: ${skipReason})` : "migrations",
  () => {
    it.live("create the schema and every table, and a second run applies nothing", () =>
      Effect.gen(function* () {
        const schema = freshSchema()
        yield* dropSchemaOnClose(url, schema)
        const executor = yield* executorFor(schema)
        expect(yield* applyMigrations(executor, schema)).toEqual({
          applied: migrations.map((m) => m.version),
          current: latest
        })
        expect(yield* applyMigrations(executor, schema)).toEqual({ applied: [], current: latest })
        expect(yield* Effect.promise(() => tablesIn(schema))).toEqual(createdTables)
      }).pipe(Effect.scoped)
    )

    it.live("two pools migrating one fresh schema at once: one applies, the other waits and applies nothing", () =>
      Effect.gen(function* () {
        const schema = freshSchema()
        yield* dropSchemaOnClose(url, schema)
        const executors = yield* Effect.all(Array.from({ length: 4 }, () => executorFor(schema)))
        const reports = yield* Effect.all(
          executors.map((executor) => applyMigrations(executor, schema)),
          { concurrency: "unbounded" }
        )
        expect(reports.map((report) => report.applied.length).sort()).toEqual([0, 0, 0, migrations.length])
        const recorded = yield* Effect.promise(() =>
          adminQuery(url, `SELECT version FROM "${schema}".accord_migrations ORDER BY version`)
        )
        expect(recorded.rows.map((row: { version: number }) => row.version)).toEqual(migrations.map((m) => m.version))
      }).pipe(Effect.scoped)
    )

    it.live("a new version is applied on top of the recorded ones, once", () =>
      Effect.gen(function* () {
        const schema = freshSchema()
        yield* dropSchemaOnClose(url, schema)
        const executor = yield* executorFor(schema)
        yield* applyMigrations(executor, schema)
        const next = [
          ...migrations,
          { version: latest + 1, name: "probe", statements: ["CREATE TABLE probe (id integer)"] }
        ]
        expect(yield* applyMigrations(executor, schema, next)).toEqual({ applied: [latest + 1], current: latest + 1 })
        expect(yield* applyMigrations(executor, schema, next)).toEqual({ applied: [], current: latest + 1 })
        expect(yield* Effect.promise(() => tablesIn(schema))).toContain("probe")
      }).pipe(Effect.scoped)
    )

    it.live("a failing migration rolls back whole: nothing of it stays, and its version is not recorded", () =>
      Effect.gen(function* () {
        const schema = freshSchema()
        yield* dropSchemaOnClose(url, schema)
        const executor = yield* executorFor(schema)
        yield* applyMigrations(executor, schema)
        const broken = [
          ...migrations,
          {
            version: latest + 1,
            name: "broken",
            statements: ["CREATE TABLE half (id integer)", "SELECT no_such_column FROM half"]
          }
        ]
        const exit = yield* Effect.exit(applyMigrations(executor, schema, broken))
        // A wrong statement is a bug, not an outage: a defect carrying the SQL error (42703 undefined_column).
        expect(Exit.isFailure(exit) ? Result.getOrUndefined(Cause.findDefect(exit.cause)) : undefined).toMatchObject({
          code: "42703"
        })
        expect(yield* Effect.promise(() => tablesIn(schema))).not.toContain("half")
        expect(yield* applyMigrations(executor, schema)).toEqual({ applied: [], current: latest })
      }).pipe(Effect.scoped)
    )

    it.live("the store layer migrates at start in its own schema", () =>
      Effect.gen(function* () {
        const schema = freshSchema()
        yield* dropSchemaOnClose(url, schema)
        yield* Layer.build(PostgresStoreLive({ connectionString: url, schema, poolSize: 1 }))
        expect(yield* Effect.promise(() => tablesIn(schema))).toContain("payment_methods")
      }).pipe(Effect.scoped)
    )

    it.effect("a schema name that is not a plain identifier is refused before connecting", () =>
      Effect.gen(function* () {
        const error = yield* Effect.flip(
          Layer.build(PostgresStoreLive({ connectionString: url, schema: 'x"; DROP TABLE y; --' }))
        )
        expect(error).toBeInstanceOf(InvalidSchemaName)
      }).pipe(Effect.scoped)
    )
  }
)

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? `one default per user in the schema (skipped: ${skipReason})`
    : "one default per user in the schema",
  () => {
    it.live(
      "a partial unique index on payment_methods(user_id) WHERE is_default rejects a second default, even by raw SQL",
      () =>
        Effect.gen(function* () {
          const schema = freshSchema()
          yield* dropSchemaOnClose(url, schema)
          yield* Layer.build(PostgresStoreLive({ connectionString: url, schema, poolSize: 1 }))
          const index = yield* Effect.promise(() =>
            adminQuery(url, "SELECT indexdef FROM pg_indexes WHERE schemaname = $1 AND indexname = $2", [
              schema,
              "payment_methods_one_default_per_user"
            ])
          )
          expect(index.rows).toEqual([
            {
              indexdef: `CREATE UNIQUE INDEX payment_methods_one_default_per_user ON ${schema}.payment_methods USING btree (user_id) WHERE is_default`
            }
          ])
          const insert = (id: string, isDefault: boolean) =>
            adminQuery(
              url,
              `INSERT INTO "${schema}".payment_methods (id, user_id, is_default, created_at, updated_at) VALUES ($1, 'u_1', $2, now(), now())`,
              [id, isDefault]
            )
          yield* Effect.promise(() => insert("pm_a", true))
          yield* Effect.promise(() => insert("pm_b", false))
          const error = yield* Effect.flip(Effect.tryPromise(() => insert("pm_c", true)))
          expect(error.cause).toMatchObject({ code: "23505", constraint: "payment_methods_one_default_per_user" })
        }).pipe(Effect.scoped)
    )

    it.live(
      "the set-default function lives in the store's schema and works on that schema's table from any search_path",
      () =>
        Effect.gen(function* () {
          const schema = freshSchema()
          yield* dropSchemaOnClose(url, schema)
          // What else is in the database is not this test's: `public` may already hold Accord's tables and function
          // (a server run without --database-schema); the migration must add none there and one in its schema.
          const homes = () =>
            Effect.promise(() =>
              adminQuery(
                url,
                `SELECT p.oid::int AS oid, n.nspname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
               WHERE p.proname = 'accord_set_default_payment_method' AND n.nspname IN ($1, 'public') ORDER BY p.oid`,
                [schema]
              )
            ).pipe(Effect.map((result) => result.rows as ReadonlyArray<{ oid: number; nspname: string }>))
          const before = yield* homes()
          yield* Layer.build(PostgresStoreLive({ connectionString: url, schema, poolSize: 1 }))
          const after = yield* homes()
          expect(after.filter((home) => home.nspname === "public")).toEqual(before)
          expect(after.filter((home) => home.nspname === schema)).toHaveLength(1)
          yield* Effect.promise(() =>
            adminQuery(
              url,
              `INSERT INTO "${schema}".payment_methods (id, user_id, is_default, created_at, updated_at)
             VALUES ('pm_a', 'u_1', true, now(), now()), ('pm_b', 'u_1', false, now(), now()), ('pm_c', 'u_2', false, now(), now())`
            )
          )
          // adminQuery's connection has the default search_path, which does not include the schema.
          const call = (userId: string, id: string) =>
            Effect.promise(() =>
              adminQuery(
                url,
                `SELECT id, is_default, updated_at FROM "${schema}".accord_set_default_payment_method($1, $2, $3)`,
                [userId, id, new Date("2030-01-01T00:00:00.123Z")]
              )
            ).pipe(Effect.map((result) => result.rows))
          expect(yield* call("u_1", "pm_b")).toEqual([
            { id: "pm_b", is_default: true, updated_at: new Date("2030-01-01T00:00:00.123Z") }
          ])
          expect(yield* call("u_1", "pm_c")).toEqual([])
          expect(yield* call("u_1", "pm_missing")).toEqual([])
          const rows = yield* Effect.promise(() =>
            adminQuery(url, `SELECT id, is_default, updated_at FROM "${schema}".payment_methods ORDER BY id`)
          )
          expect(rows.rows).toEqual([
            { id: "pm_a", is_default: false, updated_at: new Date("2030-01-01T00:00:00.123Z") },
            { id: "pm_b", is_default: true, updated_at: new Date("2030-01-01T00:00:00.123Z") },
            { id: "pm_c", is_default: false, updated_at: expect.any(Date) }
          ])
        }).pipe(Effect.scoped)
    )
  }
)
