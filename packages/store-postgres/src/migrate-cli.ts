import { anyText, nonEmpty, option, parseOptions, renderUsage } from "@accord/cli-options"
import { Cause, Effect, Exit, Option, Result } from "effect"
import { migrate, migrateDataDir } from "./layers.js"
import type { Unavailable } from "@accord/domain"
import type { DataDirError } from "./data-dir.js"
import type { InvalidSchemaName, MigrationReport } from "./migrations.js"
import { replayFailedEvents } from "./replay.js"

/** The options of `accord-migrate`: the variables are the server's (`@accord/server`), so one environment serves both. */
const migrateOptions = {
  databaseUrl: option({
    group: "Options",
    flag: "database-url",
    env: "DATABASE_URL",
    // Left to the driver to judge; the store's own message names what is wrong.
    type: anyText("URL"),
    secret: true,
    help: "`postgres://user:password@host:port/database`; never printed"
  }),
  // Checked by the store (InvalidSchemaName), whose message states its rule.
  schema: option({
    group: "Options",
    flag: "database-schema",
    env: "DATABASE_SCHEMA",
    type: anyText("NAME"),
    unsetMeans: "the connection's, usually `public`",
    help: "work in this schema; `migrate` creates it when missing, `replay-events` refuses a missing one"
  }),
  dataDir: option({
    group: "Options",
    flag: "data-dir",
    env: "DATA_DIR",
    type: nonEmpty("DIR"),
    unsetMeans: "PostgreSQL",
    help: "a PGlite data directory (the server's `--store pglite`) instead of a database URL; held by one process at a time, so stop its server first"
  })
}

const USAGE = renderUsage(migrateOptions, {
  head: `usage: accord-migrate migrate [--database-url URL] [--database-schema NAME] | [--data-dir DIR]
       accord-migrate replay-events [--database-url URL] [--database-schema NAME] | [--data-dir DIR]

migrate: applies Accord's migrations (idempotent; on PostgreSQL safe to run from several processes at once); creates
the schema, or the PGlite data directory, when missing.
replay-events: puts every event delivery that was given up (failed) back to pending, due now, with the usual retry
schedule; the relays deliver them again (docs/operations.md, "Events"). It creates nothing: a schema or data directory
that does not exist is refused.
A flag wins over its environment variable; an empty variable counts as unset.`
}).trimEnd()

export interface CliOutput {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

const reportOf = ({ applied, current }: MigrationReport): string =>
  applied.length === 0 ? `up to date at version ${current}` : `applied ${applied.join(", ")}; now at version ${current}`

/** The failures the operator fixes in the command itself (exit 2), as opposed to a database problem (exit 1). */
const USAGE_ERRORS = new Set(["InvalidSchemaName", "SchemaMissing", "NoDatabaseInDataDir", "DataDirRefused"])

/**
 * The `accord-migrate` command as a function: arguments in, exit code out (0 done, 1 database problem, 2 usage).
 * The connection string is never printed: it may carry a password.
 */
export const runMigrateCli = async (
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>,
  output: CliOutput
): Promise<number> => {
  const parsed = parseOptions(migrateOptions, argv, env, { positionals: true })
  if (Result.isFailure(parsed)) {
    output.err(`${parsed.failure.message}\n${USAGE}`)
    return 2
  }
  if (parsed.success._tag === "Help") {
    output.out(USAGE)
    return 0
  }
  const { values, positionals, warnings } = parsed.success
  // A password in --database-url shows in the process list (docs/SECURITY.md, item 39).
  for (const warning of warnings) output.err(`accord-migrate: ${warning}`)
  const command = positionals[0]
  if (positionals.length !== 1 || (command !== "migrate" && command !== "replay-events")) {
    output.err(USAGE)
    return 2
  }
  const { databaseUrl, schema, dataDir } = values
  const connectionString = databaseUrl === "" ? undefined : databaseUrl
  if (connectionString !== undefined && dataDir !== undefined) {
    output.err(
      `both a database URL and a data directory: pass one (--database-url or DATABASE_URL, or --data-dir or DATA_DIR)\n${USAGE}`
    )
    return 2
  }
  if (connectionString === undefined && dataDir === undefined) {
    output.err(`no database: pass --database-url or set DATABASE_URL (PGlite: --data-dir or DATA_DIR)\n${USAGE}`)
    return 2
  }
  const target =
    dataDir !== undefined
      ? { dataDir }
      : { connectionString: connectionString ?? "", ...(schema !== undefined && { schema }) }
  const migration: Effect.Effect<MigrationReport, Unavailable | InvalidSchemaName | DataDirError> =
    "dataDir" in target
      ? migrateDataDir({
          dataDir: target.dataDir,
          onInitialise: (dir) => output.err(`accord-migrate: initialising a new PGlite database in ${dir}`)
        })
      : migrate(target)
  const exit = await Effect.runPromiseExit(
    command === "migrate"
      ? Effect.map(migration, reportOf)
      : Effect.map(
          Effect.flatMap(
            Effect.sync(() => new Date()),
            (now) => replayFailedEvents(target, now)
          ),
          (count) => `${count} failed event${count === 1 ? "" : "s"} pending again`
        )
  )
  if (Exit.isSuccess(exit)) {
    output.out(exit.value)
    return 0
  }
  const failure = Cause.findErrorOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (USAGE_ERRORS.has(error._tag)) {
      output.err(error.message)
      return 2
    }
    if (error._tag !== "Unavailable") {
      output.err(error.message)
      return 1
    }
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ""
    output.err(`database unreachable${cause}`)
    return 1
  }
  output.err(`${command === "migrate" ? "migration" : "replay"} failed: ${Cause.pretty(exit.cause)}`)
  return 1
}
