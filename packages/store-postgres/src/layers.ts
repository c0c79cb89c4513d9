import { statfsSync } from "node:fs"
import { Effect, Layer, type Scope } from "effect"
import { PGlite } from "@electric-sql/pglite"
import pg from "pg"
import { EventWakeups, type StoreServices, type Unavailable } from "@accord/domain"
import { EVENTS_CHANNEL } from "./events.js"
import { holdDataDir, holdsDatabase, reasonOf, type DataDirError, DataDirUnusable } from "./data-dir.js"
import { applyMigrations, quoteSchema, type InvalidSchemaName, type MigrationReport } from "./migrations.js"
import { makePgliteExecutor, type PgliteDatabase } from "./pglite-executor.js"
import { oneCallQueries } from "./pglite-protocol.js"
import { makePoolExecutor } from "./pg-executor.js"
import type { SqlExecutor } from "./sql-executor.js"
import { makeSqlStore } from "./store.js"
import type { SqlStoreOptions } from "./store.js"

export interface PostgresStoreOptions extends SqlStoreOptions {
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
  /**
   * Called with the error of every statement that failed because the database has no room left (SQLSTATE 53100
   * disk_full, 53200 out_of_memory), which fails Unavailable(store_full): for the host's log.
   */
  readonly onStoreFull?: (cause: unknown) => void
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

/** How long a lost notification connection waits before it connects again. */
const RELISTEN_DELAY_MS = 1000

/**
 * One connection of its own that LISTENs on `EVENTS_CHANNEL` for as long as the scope, waking the owner each
 * notification names (docs/api.md, "Events": a commit in any process reaches every process's streams). A lost
 * connection is opened again after `RELISTEN_DELAY_MS`, and every stream is woken then: what was notified meanwhile
 * is read from the outbox, the truth. Never fails the store's start: the streams' periodic read covers an outage.
 */
const listenForEvents = (options: PostgresStoreOptions) =>
  Effect.gen(function* () {
    const quoted = options.schema === undefined ? undefined : yield* quoteSchema(options.schema)
    const wakeups = new EventWakeups()
    let stopped = false
    let client: pg.Client | undefined
    let timer: ReturnType<typeof setTimeout> | undefined
    const connect = (): void => {
      if (stopped) return
      const next = new pg.Client({
        connectionString: options.connectionString,
        keepAlive: true,
        keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
        connectionTimeoutMillis: options.connectionTimeoutMs ?? queryTimeoutOf(options)
      })
      client = next
      let retried = false
      const retry = (): void => {
        if (retried || stopped) return
        retried = true
        next.removeAllListeners("notification")
        void next.end().catch(() => {})
        timer = setTimeout(connect, RELISTEN_DELAY_MS)
      }
      next.on("error", retry)
      next.on("end", retry)
      next.on("notification", (message) => {
        if (message.payload !== undefined) wakeups.wake(message.payload)
      })
      next
        .connect()
        .then(() => (quoted === undefined ? undefined : next.query(`SET search_path TO ${quoted}`)))
        .then(() => next.query(`LISTEN ${EVENTS_CHANNEL}`))
        .then(() => wakeups.wakeAll())
        .catch(retry)
    }
    yield* Effect.acquireRelease(Effect.sync(connect), () =>
      Effect.promise(
        () =>
          new Promise<void>((resolve) => {
            stopped = true
            clearTimeout(timer)
            const last = client
            if (last === undefined) return resolve()
            // As the pool's (`endWithin`): a stalled server never answers the goodbye, and `end` would wait forever.
            const grace = setTimeout(() => {
              last.connection.stream.destroy()
              resolve()
            }, POOL_CLOSE_GRACE_MS)
            void last
              .end()
              .catch(() => {})
              .finally(() => {
                clearTimeout(grace)
                resolve()
              })
          })
      )
    )
    return wakeups
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
  schema?: string,
  options: SqlStoreOptions = {}
): Layer.Layer<StoreServices, Unavailable | InvalidSchemaName> =>
  Layer.effectContext(Effect.andThen(applyMigrations(executor, schema), makeSqlStore(executor, options)))

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
      const { observePool: _storePoolOnly, onStoreFull, ...connection } = options
      yield* migrate(connection)
      const pool = yield* makePgPool(options)
      const eventWakeups = yield* listenForEvents(options)
      return yield* makeSqlStore(
        makePoolExecutor(pool, {
          queryTimeoutMs: queryTimeoutOf(options),
          ...(onStoreFull !== undefined && { onStoreFull })
        }),
        // No write waits for its record's turn longer than any statement may take.
        { ...options, turnWaitMs: options.turnWaitMs ?? queryTimeoutOf(options), eventWakeups }
      )
    })
  )

export interface PgliteStoreOptions extends SqlStoreOptions {
  /**
   * A directory to keep the database in, created when missing and held by this process alone (its lock file,
   * `accord.lock`); absent: in memory, gone when the scope closes.
   */
  readonly dataDir?: string
  /**
   * Called with the error of every statement that failed because the database has no room left (a full disk), which
   * fails Unavailable(store_full): for the host's log.
   */
  readonly onStoreFull?: (cause: unknown) => void
  /**
   * Called once before the first start on a data directory that holds no database yet, which PGlite then creates
   * (its initdb: many seconds, tens on a busy machine): for the host's log.
   */
  readonly onInitialise?: (dataDir: string) => void
}

/**
 * The free space below which PGlite is given no statement, and a crashed database is not reopened: a WAL segment is a
 * new 16 MiB file, and PostgreSQL PANICs when it cannot make one (PGlite then spins for ever if that was a COMMIT, and
 * fails to start without room for it: measured), so twice that.
 */
export const PGLITE_MIN_FREE_BYTES = 32 * 1024 * 1024

/**
 * Failed opens after which a crashed database is no longer reopened: each leaves about 150 MB of PGlite's instance
 * behind that is never given back (measured), so a process that kept trying would run out of memory.
 */
const MAX_FAILED_REOPENS = 3

/** Undefined while the file system `path` is on has `PGLITE_MIN_FREE_BYTES` free, else an ENOSPC saying how much it has. */
const roomAt = (path: string) => (): Error | undefined => {
  let free: number
  try {
    const { bavail, bsize } = statfsSync(path)
    free = bavail * bsize
  } catch {
    // Not knowable here: PGlite's own errors say more.
    return undefined
  }
  if (free >= PGLITE_MIN_FREE_BYTES) return undefined
  const mib = (bytes: number) => Math.floor(bytes / 1024 / 1024)
  return Object.assign(
    new Error(
      `${mib(free)} MiB free on the data directory's file system, less than the ${mib(PGLITE_MIN_FREE_BYTES)} MiB ` +
        "PGlite needs to write safely"
    ),
    { code: "ENOSPC" }
  )
}

/** PGlite's settings, in memory or on disk. */
const PGLITE_SETTINGS = {
  // Off (the default, stated so that it stays off): on, PGlite answers before syncing its file system. On Node a data
  // directory is Emscripten's NODEFS, which writes through (writeSync) as PostgreSQL writes: a committed
  // transaction's WAL is in the kernel before the answer, so it survives `kill -9`. PGlite runs with fsync off, so a
  // machine crash may lose it (docs/operations.md, "The PGlite store").
  relaxedDurability: false
}

/**
 * Opens the data directory again after a crash, when its file system has room for it, and gives up after
 * `MAX_FAILED_REOPENS` failures (docs/operations.md, "The PGlite store": a restart then recovers).
 */
const reopenerOf = (
  path: string,
  checkRoom: () => Error | undefined,
  opened: (db: PGlite) => void
): (() => Promise<PgliteDatabase>) => {
  let failures = 0
  return async () => {
    if (failures >= MAX_FAILED_REOPENS) {
      throw new Error(`the database could not be reopened (${failures} attempts): restart the process once it has room`)
    }
    const noRoom = checkRoom()
    if (noRoom !== undefined) throw noRoom
    try {
      const db = await PGlite.create({ ...PGLITE_SETTINGS, dataDir: path })
      opened(db)
      return oneCallQueries(db)
    } catch (error) {
      failures += 1
      throw error
    }
  }
}

/**
 * The store on PGlite (PostgreSQL compiled to WebAssembly, in this process), migrated at start; closed with its scope.
 * With a data directory: `DataDirRefused` when it is another user's or not empty and not a database,
 * `DataDirInUse` while another live process holds it (PGlite itself would let both write), `DataDirUnusable` when it
 * cannot be created or opened. With less than `PGLITE_MIN_FREE_BYTES` free on its file system, or a full disk,
 * statements fail Unavailable(store_full); a database that crashed is reopened once there is room
 * (docs/operations.md, "The PGlite store").
 */
export const PgliteStoreLive = (options: PgliteStoreOptions = {}): Layer.Layer<StoreServices, DataDirError> =>
  Layer.effectContext(
    Effect.flatMap(openPglite(options), ({ executor, eventWakeups }) =>
      makeSqlStore(executor, { ...options, eventWakeups })
    )
  )

/**
 * Brings a PGlite data directory (created and initialised when missing) up to the latest migration, then closes it:
 * `accord-migrate migrate --data-dir`. Fails as `PgliteStoreLive` does, `DataDirInUse` while a server holds it.
 */
export const migrateDataDir = (
  options: Pick<PgliteStoreOptions, "onInitialise"> & { readonly dataDir: string }
): Effect.Effect<MigrationReport, DataDirError> =>
  Effect.scoped(Effect.map(openPglite(options), ({ report }) => report))

/** PGlite opened (its data directory held) and migrated, for as long as the scope. */
export const openPglite = (
  options: PgliteStoreOptions
): Effect.Effect<
  { readonly executor: SqlExecutor; readonly report: MigrationReport; readonly eventWakeups: EventWakeups },
  DataDirError,
  Scope.Scope
> =>
  Effect.gen(function* () {
    const { dataDir, onStoreFull, onInitialise } = options
    // The directory's real path: the one its checks ran on.
    const onDisk =
      dataDir === undefined
        ? undefined
        : yield* Effect.map(holdDataDir(dataDir), (path) => ({ dataDir, path, checkRoom: roomAt(path) }))
    if (onDisk !== undefined && !holdsDatabase(onDisk.path)) onInitialise?.(onDisk.dataDir)
    const open =
      onDisk === undefined
        ? Effect.promise(() => PGlite.create(PGLITE_SETTINGS))
        : Effect.tryPromise({
            try: () => {
              const noRoom = onDisk.checkRoom()
              return noRoom === undefined
                ? PGlite.create({ ...PGLITE_SETTINGS, dataDir: onDisk.path })
                : Promise.reject(noRoom)
            },
            catch: (cause) => new DataDirUnusable({ dataDir: onDisk.dataDir, reason: reasonOf(cause) })
          })
    /** The database open now: the first, or the last one reopened after a crash; a crashed one is closed already. */
    let latest: PGlite = yield* Effect.acquireRelease(open, () =>
      Effect.promise(() => (latest.closed ? Promise.resolve() : latest.close()))
    )
    const executor = yield* makePgliteExecutor(oneCallQueries(latest), {
      ...(onStoreFull !== undefined && { onStoreFull }),
      ...(onDisk !== undefined && {
        checkRoom: onDisk.checkRoom,
        reopen: reopenerOf(onDisk.path, onDisk.checkRoom, (db) => {
          latest = db
        })
      })
    })
    // PGlite has no network: a failure here is a defect, not an outage.
    const report = yield* Effect.orDie(applyMigrations(executor))
    // The write's own statement notifies (`EVENTS_CHANNEL`); PGlite delivers it in this process once it commits. A
    // database reopened after a crash is not listened to: the streams' periodic read still finds every event.
    const eventWakeups = new EventWakeups()
    yield* Effect.promise(() => latest.listen(EVENTS_CHANNEL, (payload) => eventWakeups.wake(payload)))
    return { executor, report, eventWakeups }
  })
