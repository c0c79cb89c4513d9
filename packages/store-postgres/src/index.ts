export { fromDriverError, isConnectionError } from "./connection-errors.js"
export {
  makePgPool,
  migrate,
  PgliteStoreLive,
  PostgresStoreLive,
  SqlStoreLive,
  type PgliteStoreOptions,
  type PgPoolStats,
  type PostgresStoreOptions
} from "./layers.js"
export { applyMigrations, InvalidSchemaName, migrations, type Migration, type MigrationReport } from "./migrations.js"
export { makePgliteExecutor } from "./pglite-executor.js"
export { makePoolExecutor } from "./pg-executor.js"
export type { SqlClient, SqlExecutor } from "./sql-executor.js"
export { runMigrateCli, type CliOutput } from "./migrate-cli.js"
export { makeSqlStore } from "./store.js"
