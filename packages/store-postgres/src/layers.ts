import { Effect, Layer } from "effect"
import { PGlite } from "@electric-sql/pglite"
import pg from "pg"
import type { StoreServices, Unavailable } from "@accord/core"
import { applyMigrations, quoteSchema, type InvalidSchemaName, type MigrationReport } from "./migrations.js"
import { makePgliteExecutor } from "./pglite-executor.js"
import { makePoolExecutor } from "./pg-executor.js"
import type { SqlExecutor } from "./sql-executor.js"
import { makeSqlStore } from "./store.js"

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database` */
  readonly connectionString: string
  /** Work in this PostgreSQL schema (created when missing) instead of the connection's default (`public`). */
  readonly schema?: string
  /** Connections in the pool, default 10. */
  readonly poolSize?: number
  /** How long a request waits for a connection (new, or free in a busy pool) before Unavailable, default 10000. */
  readonly connectionTimeoutMs?: number
  /** Called once, as the pool is made, with a live view of its connections (for a host's metrics). */
  readonly observePool?: (pool: PgPoolStats) => void
}

/** A pool's connections, read at any time: each field is the current count, not a snapshot. */
export interface PgPoolStats {
  /** Connections open, idle or checked out. */
  readonly total: number
  readonly idle: number
  /** Queries waiting for a connection (the pool is at `max` and none is idle). */
  readonly waiting: number
  readonly max: number
}

/**
 * A pool that lives as long as the scope. Its search_path is set on each new connection (`onConnect`, so a
 * connection string's own `options` cannot override it). Errors of idle clients (a server restart) are expected:
 * the pool drops those clients and opens new ones on demand; the listener only keeps them from crashing the process.
 */
export const makePgPool = (options: PostgresStoreOptions) =>
  Effect.gen(function* () {
    const quoted = options.schema === undefined ? undefined : yield* quoteSchema(options.schema)
    return yield* Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new pg.Pool({
          connectionString: options.connectionString,
          max: options.poolSize ?? 10,
          connectionTimeoutMillis: options.connectionTimeoutMs ?? 10_000,
          keepAlive: true,
          ...(quoted !== undefined && {
            onConnect: async (client: pg.ClientBase) => {
              await client.query(`SET search_path TO ${quoted}`)
            }
          })
        })
        pool.on("error", () => {})
        options.observePool?.({
          get total() {
            return pool.totalCount
          },
          get idle() {
            return pool.idleCount
          },
          get waiting() {
            return pool.waitingCount
          },
          max: pool.options.max
        })
        return pool
      }),
      (pool) => Effect.promise(() => pool.end())
    )
  })

/** Applies the migrations over a short-lived pool, e.g. from a deploy step; the store layers also migrate at start. */
export const migrate = (
  options: Omit<PostgresStoreOptions, "poolSize">
): Effect.Effect<MigrationReport, Unavailable | InvalidSchemaName> =>
  Effect.scoped(
    Effect.flatMap(makePgPool({ ...options, poolSize: 1 }), (pool) =>
      applyMigrations(makePoolExecutor(pool), options.schema)
    )
  )

/** The store over an executor you made yourself: migrates, then provides every port. */
export const SqlStoreLive = (
  executor: SqlExecutor,
  schema?: string
): Layer.Layer<StoreServices, Unavailable | InvalidSchemaName> =>
  Layer.effectContext(Effect.as(applyMigrations(executor, schema), makeSqlStore(executor)))

/**
 * The store on a PostgreSQL server through a node-postgres pool, migrated at start. The pool ends when the layer's
 * scope closes. Fails with Unavailable when the database cannot be reached at start.
 */
export const PostgresStoreLive = (
  options: PostgresStoreOptions
): Layer.Layer<StoreServices, Unavailable | InvalidSchemaName> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const executor = makePoolExecutor(yield* makePgPool(options))
      yield* applyMigrations(executor, options.schema)
      return makeSqlStore(executor)
    })
  )

export interface PgliteStoreOptions {
  /** A directory to keep the database in; absent: in memory, gone when the scope closes. */
  readonly dataDir?: string
}

/** The store on PGlite (PostgreSQL compiled to WebAssembly, in this process), migrated at start; closed with its scope. */
export const PgliteStoreLive = (options: PgliteStoreOptions = {}): Layer.Layer<StoreServices> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const db = yield* Effect.acquireRelease(
        Effect.promise(() => (options.dataDir === undefined ? PGlite.create() : PGlite.create(options.dataDir))),
        (db) => Effect.promise(() => db.close())
      )
      const executor = yield* makePgliteExecutor(db)
      // PGlite has no network: a failure here is a defect, not an outage.
      yield* Effect.orDie(applyMigrations(executor))
      return makeSqlStore(executor)
    })
  )
