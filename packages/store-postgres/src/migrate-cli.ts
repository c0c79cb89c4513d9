import { anyText, option, parseOptions, renderUsage } from "@accord/cli-options"
import { Cause, Effect, Exit, Option, Result } from "effect"
import { EventStore } from "@accord/domain"
import { migrate, PostgresStoreLive } from "./layers.js"

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
    help: "work in this schema, created when missing"
  })
}

const USAGE = renderUsage(migrateOptions, {
  head: `usage: accord-migrate migrate [--database-url URL] [--database-schema NAME]
       accord-migrate replay-events [--database-url URL] [--database-schema NAME]

migrate: applies Accord's PostgreSQL migrations (idempotent; safe to run from several processes at once).
replay-events: puts every event whose delivery was given up (failed) back to pending, due now; the running servers'
relays deliver them again (docs/operations.md, "Events").
A flag wins over its environment variable; an empty variable counts as unset.`
}).trimEnd()

export interface CliOutput {
  readonly out: (line: string) => void
  readonly err: (line: string) => void
}

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
  const { databaseUrl: connectionString, schema } = values
  if (connectionString === undefined || connectionString === "") {
    output.err(`no database: pass --database-url or set DATABASE_URL\n${USAGE}`)
    return 2
  }
  const connection = { connectionString, ...(schema !== undefined && { schema }) }
  const exit = await Effect.runPromiseExit(
    command === "migrate"
      ? Effect.map(migrate(connection), ({ applied, current }) =>
          applied.length === 0
            ? `up to date at version ${current}`
            : `applied ${applied.join(", ")}; now at version ${current}`
        )
      : Effect.provide(
          Effect.flatMap(EventStore, (events) =>
            Effect.map(
              Effect.flatMap(
                Effect.sync(() => new Date()),
                events.replayFailed
              ),
              (count) => {
                return `${count} failed event${count === 1 ? "" : "s"} pending again`
              }
            )
          ),
          PostgresStoreLive({ ...connection, poolSize: 1 })
        )
  )
  if (Exit.isSuccess(exit)) {
    output.out(exit.value)
    return 0
  }
  const failure = Cause.findErrorOption(exit.cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error._tag === "InvalidSchemaName") {
      output.err(error.message)
      return 2
    }
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ""
    output.err(`database unreachable${cause}`)
    return 1
  }
  output.err(`migration failed: ${Cause.pretty(exit.cause)}`)
  return 1
}
