import { parseArgs } from "node:util"
import { Cause, Effect, Exit, Option } from "effect"
import { migrate } from "./layers.js"

const USAGE = `usage: accord-migrate migrate [--database-url URL] [--schema NAME]

Applies Accord's PostgreSQL migrations (idempotent; safe to run from several processes at once).
  --database-url URL   postgres://user:password@host:port/database (default: $DATABASE_URL)
  --schema NAME        work in this schema, created when missing (default: the connection's, usually public)`

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
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: { "database-url": { type: "string" }, schema: { type: "string" }, help: { type: "boolean", short: "h" } }
    })
  } catch (error) {
    output.err(`${error instanceof Error ? error.message : String(error)}\n${USAGE}`)
    return 2
  }
  if (parsed.values.help === true) {
    output.out(USAGE)
    return 0
  }
  if (parsed.positionals.length !== 1 || parsed.positionals[0] !== "migrate") {
    output.err(USAGE)
    return 2
  }
  const connectionString = parsed.values["database-url"] ?? env["DATABASE_URL"]
  if (connectionString === undefined || connectionString === "") {
    output.err(`no database: pass --database-url or set DATABASE_URL\n${USAGE}`)
    return 2
  }
  const schema = parsed.values.schema
  const exit = await Effect.runPromiseExit(migrate({ connectionString, ...(schema !== undefined && { schema }) }))
  if (Exit.isSuccess(exit)) {
    const { applied, current } = exit.value
    output.out(
      applied.length === 0
        ? `up to date at version ${current}`
        : `applied ${applied.join(", ")}; now at version ${current}`
    )
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
