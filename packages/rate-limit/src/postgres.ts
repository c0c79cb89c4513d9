import { createHash } from "node:crypto"
import pg from "pg"
import { RateLimiterPostgres } from "rate-limiter-flexible"
import {
  DEFAULT_KEY_PREFIX,
  storeLimiter,
  reporter,
  type ClosableRateLimiter,
  type SharedLimiterOptions
} from "./store-limiter.js"
import { fixedWindowFor, type RateLimitOptions } from "./window.js"

/** The table that holds the windows, one row per key: `key varchar(255) PRIMARY KEY, points integer, expire bigint`. */
export const RATE_LIMIT_TABLE = "accord_rate_limits"

/** The same rule as the store's schema names (store-postgres): quoted as is into SQL, so nothing else passes. */
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/
const MAX_KEY_PREFIX = 64
/** The key column is varchar(255): a longer key (a long JWT subject) is stored as its digest instead. */
const MAX_ROW_KEY = 255

/** Connecting, and each query, give up after this long: a hung database does not hold pool connections for long. */
const POOL_TIMEOUT_MS = 2000

export interface PostgresRateLimiterOptions extends RateLimitOptions, SharedLimiterOptions {
  /** `postgres://user:password@host:port/database`: in the server, the store's database. */
  readonly connectionString: string
  /** The schema that holds the table (it must exist: the store creates it); default the connection's search_path. */
  readonly schema?: string
  /**
   * Default true: the table is created at start when missing (`CREATE TABLE IF NOT EXISTS`, safe when several
   * processes start at once). false: it exists already, e.g. created by the operator for a role that may not create.
   */
  readonly createTable?: boolean
  /** Connections in this limiter's own pool, default 2; also the statements it has in flight at once. */
  readonly poolSize?: number
}

const DEFAULT_POOL_SIZE = 2

const concurrentlyCreated = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && (error.code === "42P07" || error.code === "23505")
const CLEANUP_INTERVAL_MS = 5 * 60_000

/**
 * One allowance per credential for every process on the database, in the table `accord_rate_limits`. Resolves once
 * the table is there; rejects when it cannot be created (the database is unreachable, or the role may not create
 * tables), having closed its pool. After that, while the database fails or is slow, this process limits each credential
 * by itself (see `SharedLimiterOptions`).
 *
 * The windows' ends are computed from each process's clock: keep the servers' clocks in sync.
 */
export const makePostgresRateLimiter = async (options: PostgresRateLimiterOptions): Promise<ClosableRateLimiter> => {
  const { points, durationSeconds } = fixedWindowFor(options)
  const keyPrefix = options.keyPrefix ?? DEFAULT_KEY_PREFIX
  if (options.schema !== undefined && !SCHEMA_NAME.test(options.schema)) {
    throw new RangeError("schema must be 1 to 63 characters of [A-Za-z0-9_], not starting with a digit")
  }
  if (keyPrefix.length > MAX_KEY_PREFIX) throw new RangeError(`keyPrefix must be at most ${MAX_KEY_PREFIX} characters`)
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    // Each consume is one short query: a small pool, beside the store's own (size the database for both).
    max: poolSize,
    connectionTimeoutMillis: POOL_TIMEOUT_MS,
    query_timeout: POOL_TIMEOUT_MS,
    keepAlive: true
  })
  // An idle connection that breaks is reported, never an unhandled 'error' event (which would end the process).
  pool.on("error", reporter(options.onError))
  // Every open connection, so that close() can cut them whatever the database is doing.
  const connections = new Set<pg.Client>()
  pool.on("connect", (client) => connections.add(client))
  pool.on("remove", (client) => connections.delete(client))

  let tableDone: (error?: Error) => void = () => {}
  const tableReady = new Promise<void>((resolve, reject) => {
    tableDone = (error) => (error === undefined ? resolve() : reject(error))
  })
  const limiterOptions = {
    storeClient: pool,
    storeType: "pool",
    tableName: RATE_LIMIT_TABLE,
    ...(options.schema !== undefined && { schemaName: options.schema }),
    // Its own clean-up timer would outlive close(); ours below is cleared there.
    clearExpiredByTimeout: false,
    keyPrefix,
    points,
    duration: durationSeconds
  }
  let limiter = new RateLimiterPostgres({ ...limiterOptions, tableCreated: options.createTable === false }, (error) =>
    tableDone(error)
  )
  try {
    await tableReady
  } catch (error) {
    // `CREATE TABLE IF NOT EXISTS` run by two processes at the same moment: one of them fails (42P07, or 23505 on the
    // table's row type), though the table is there. That one goes on with the table the other made.
    if (concurrentlyCreated(error)) limiter = new RateLimiterPostgres({ ...limiterOptions, tableCreated: true })
    else {
      await pool.end()
      throw error
    }
  }

  const longestKey = MAX_ROW_KEY - keyPrefix.length - 1
  // A key PostgreSQL text cannot hold (a NUL) would fail its statement, and a failure sends every credential to the
  // local limit: it is stored as its digest too, so no credential's bytes can make the store look down.
  const rowKey = (key: string): string =>
    key.length <= longestKey && !key.includes("\u0000")
      ? key
      : `sha256:${createHash("sha256").update(key).digest("hex")}`
  // Rows of windows that ended an hour ago go, as rate-limiter-flexible's own timer would delete them.
  // (The schema passed SCHEMA_NAME above, so quoting it is safe.)
  const table = options.schema === undefined ? `"${RATE_LIMIT_TABLE}"` : `"${options.schema}"."${RATE_LIMIT_TABLE}"`
  const clearExpired = () =>
    void pool.query(`DELETE FROM ${table} WHERE expire < $1`, [Date.now() - 3_600_000]).catch(() => undefined)
  const cleanup = setInterval(clearExpired, CLEANUP_INTERVAL_MS).unref()
  let closing: Promise<void> | undefined
  return {
    // No more statements in flight than the pool has connections: none waits inside the pool, where a wait would
    // look like a database that does not answer (docs/operations.md, "Rate limits").
    ...storeLimiter((key, count) => limiter.consume(rowKey(key), count), {
      ...options,
      points,
      windowSeconds: durationSeconds,
      maxInFlight: poolSize
    }),
    close: () => {
      clearInterval(cleanup)
      // At once, whatever the database is doing (a stalled one never answers a goodbye): the counts need none.
      closing ??= (async () => {
        const ended = pool.end()
        for (const client of connections) client.connection.stream.destroy()
        await ended
      })()
      return closing
    }
  }
}
