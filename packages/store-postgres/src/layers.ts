import { Effect, Layer } from "effect"
import { PGlite } from "@electric-sql/pglite"
import pg from "pg"
import type { StoreServices, Unavailable } from "@accord/core"
import { holdDataDir, type DataDirError, DataDirUnusable } from "./data-dir.js"
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
  /**
   * The longest a statement may take, default 5000 ms (`DEFAULT_QUERY_TIMEOUT_MS`), its wait for a connection
   * included; past it the request fails Unavailable and the statement's connection is destroyed. The server is told
   * to cancel a statement itself at 80% of it (`statement_timeout`), and to end a session idle in a transaction for
   * that long (`idle_in_transaction_session_timeout`). Migrations are not bounded (docs/operations.md, "Database
   * timeouts").
   */
  readonly queryTimeoutMs?: number
  /** How long opening a new connection may take before Unavailable, default the query timeout. */
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

export const DEFAULT_QUERY_TIMEOUT_MS = 5000
/** How long closing waits for the connections' goodbyes before it destroys them: a stalled server sends none. */
export const POOL_CLOSE_GRACE_MS = 1000
/** Idle connections are probed (TCP keepalive) after this long, so one whose server vanished is found. */
const KEEPALIVE_DELAY_MS = 10_000

const queryTimeoutOf = (options: PostgresStoreOptions): number => options.queryTimeoutMs ?? DEFAULT_QUERY_TIMEOUT_MS

/**
 * Ends the pool politely, and destroys whatever connection is still open after `graceMs`: resolves within it
 * whatever the database does (a stalled one never answers a goodbye, and node-postgres would wait for it forever).
 */
const endWithin = (pool: pg.Pool, connections: ReadonlySet<pg.Client>, graceMs: number): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(() => {
      for (const client of connections) client.connection.stream.destroy()
      resolve()
    }, graceMs)
    pool.end().then(
      () => {
        clearTimeout(timer)
        resolve()
      },
      () => {
        clearTimeout(timer)
        resolve()
      }
    )
  })

/**
 * A pool that lives as long as the scope (closing it takes at most `POOL_CLOSE_GRACE_MS`). Its search_path is set
 * on each new connection (`onConnect`, so a connection string's own `options` cannot override it). Errors of idle
 * clients (a server restart) are expected: the pool drops those clients and opens new ones on demand; the listener
 * only keeps them from crashing the process. `boundStatements` false leaves statements unbounded on the server (for
 * migrations).
 */
const openPool = (options: PostgresStoreOptions, boundStatements: boolean) =>
  Effect.gen(function* () {
    const quoted = options.schema === undefined ? undefined : yield* quoteSchema(options.schema)
    const queryTimeoutMs = queryTimeoutOf(options)
    return yield* Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new pg.Pool({
          connectionString: options.connectionString,
          max: options.poolSize ?? 10,
          connectionTimeoutMillis: options.connectionTimeoutMs ?? queryTimeoutMs,
          keepAlive: true,
          keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
          ...(boundStatements && {
            // The server cancels first (57014, the connection stays usable); the executor's own bound, a little
            // later, is for a server that does not answer at all.
            statement_timeout: Math.max(1, Math.floor(queryTimeoutMs * 0.8)),
            // A transaction whose client vanished (a failover) must not hold its row locks for long.
            idle_in_transaction_session_timeout: queryTimeoutMs
          }),
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
        const connections = new Set<pg.Client>()
        pool.on("connect", (client) => void connections.add(client))
        pool.on("remove", (client) => void connections.delete(client))
        return { pool, connections }
      }),
      ({ pool, connections }) => Effect.promise(() => endWithin(pool, connections, POOL_CLOSE_GRACE_MS))
    ).pipe(Effect.map(({ pool }) => pool))
  })

/** The store's pool, its statements bounded on the server by the query timeout (see `PostgresStoreOptions`). */
export const makePgPool = (options: PostgresStoreOptions) => openPool(options, true)
/**
 * Applies the migrations over a short-lived pool of one connection, e.g. from a deploy step; the store layers also
 * migrate at start. Its statements are not bounded: a migration, or the wait for another process's, may take long.
 */
export const migrate = (
  options: Omit<PostgresStoreOptions, "poolSize">
): Effect.Effect<MigrationReport, Unavailable | InvalidSchemaName> =>
  Effect.scoped(
    Effect.flatMap(openPool({ ...options, poolSize: 1 }, false), (pool) =>
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
 * The store on a PostgreSQL server through a node-postgres pool whose every statement is bounded by
 * `queryTimeoutMs`, migrated at start (over a connection of its own, unbounded). The pool ends when the layer's scope
 * closes, within `POOL_CLOSE_GRACE_MS`. Fails with Unavailable when the database cannot be reached at start.
 */
export const PostgresStoreLive = (
  options: PostgresStoreOptions
): Layer.Layer<StoreServices, Unavailable | InvalidSchemaName> =>
  Layer.effectContext(
    Effect.gen(function* () {
      // The metrics watch the store's pool, not the migrations' short-lived one.
      const { observePool: _storePoolOnly, ...connection } = options
      yield* migrate(connection)
      const pool = yield* makePgPool(options)
      return makeSqlStore(makePoolExecutor(pool, { queryTimeoutMs: queryTimeoutOf(options) }))
    })
  )

export interface PgliteStoreOptions {
  /**
   * A directory to keep the database in, created when missing and held by this process alone (its lock file,
   * `accord.lock`); absent: in memory, gone when the scope closes.
   */
  readonly dataDir?: string
}

/**
 * The store on PGlite (PostgreSQL compiled to WebAssembly, in this process), migrated at start; closed with its scope.
 * With a data directory: `DataDirRefused` when it is another user's or not empty and not a database,
 * `DataDirInUse` while another live process holds it (PGlite itself would let both write), `DataDirUnusable` when it
 * cannot be created or opened.
 */
export const PgliteStoreLive = (options: PgliteStoreOptions = {}): Layer.Layer<StoreServices, DataDirError> =>
  Layer.effectContext(
    Effect.gen(function* () {
      const { dataDir } = options
      // The directory's real path: the one its checks ran on.
      const path = dataDir === undefined ? undefined : yield* holdDataDir(dataDir)
      // relaxedDurability off (the default, stated so that it stays off): on, PGlite answers before syncing its file
      // system. On Node a data directory is Emscripten's NODEFS, which writes through (writeSync) as PostgreSQL
      // writes: a committed transaction's WAL is in the kernel before the answer, so it survives `kill -9`. PGlite
      // runs with fsync off, so a machine crash may lose it (docs/operations.md, "The PGlite store").
      const settings = { relaxedDurability: false }
      const open =
        dataDir === undefined || path === undefined
          ? Effect.promise(() => PGlite.create(settings))
          : Effect.tryPromise({
              try: () => PGlite.create({ ...settings, dataDir: path }),
              catch: (cause) =>
                new DataDirUnusable({ dataDir, reason: cause instanceof Error ? cause.message : String(cause) })
            })
      const db = yield* Effect.acquireRelease(open, (db) => Effect.promise(() => db.close()))
      const executor = yield* makePgliteExecutor(db)
      // PGlite has no network: a failure here is a defect, not an outage.
      yield* Effect.orDie(applyMigrations(executor))
      return makeSqlStore(executor)
    })
  )
