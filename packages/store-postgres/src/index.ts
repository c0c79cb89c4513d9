export {
  DEFAULT_CREDENTIAL_CACHE_CAPACITY,
  DEFAULT_CREDENTIAL_CACHE_TTL_MS,
  type CredentialCacheOptions
} from "./credentials.js"
export { DatabaseTimeout, fromDriverError, isConnectionError, isStoreFull } from "./connection-errors.js"
export { DATA_DIR_LOCK_FILE, DataDirInUse, DataDirRefused, DataDirUnusable, type DataDirError } from "./data-dir.js"
export {
  DEFAULT_QUERY_TIMEOUT_MS,
  makePgPool,
  migrate,
  migrateDataDir,
  PGLITE_MIN_FREE_BYTES,
  PgliteStoreLive,
  POOL_CLOSE_GRACE_MS,
  PostgresStoreLive,
  SqlStoreLive,
  type PgliteStoreOptions,
  type PgPoolStats,
  type PostgresStoreOptions
} from "./layers.js"
export { applyMigrations, InvalidSchemaName, migrations, type Migration, type MigrationReport } from "./migrations.js"
export {
  makePgliteExecutor,
  REOPEN_INTERVAL_MS,
  type PgliteDatabase,
  type PgliteExecutorOptions
} from "./pglite-executor.js"
export { makePoolExecutor, type PoolExecutorOptions } from "./pg-executor.js"
export { oneCallQueries } from "./pglite-protocol.js"
export type { SqlClient, SqlExecutor } from "./sql-executor.js"
export { runMigrateCli, type CliOutput } from "./migrate-cli.js"
export {
  NoDatabaseInDataDir,
  REPLAY_NEEDS_VERSION,
  replayFailedEvents,
  SchemaBehind,
  SchemaMissing,
  type ReplayError,
  type ReplayTarget
} from "./replay.js"
export { DEFAULT_TURN_WAIT_MS, makeSqlStore, type SqlStoreOptions } from "./store.js"
export type { OnUnreadableEvent } from "./events.js"
