import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { startCliServer, type CliServer } from "./cli-server.js"
import { seedInput } from "./fixtures.js"
import { forkChild, messageOf, stopChild } from "./processes.js"
import {
  CLI_ADAPTERS,
  CLI_PGLITE,
  CLI_POSTGRES,
  cliKind,
  isServerKind,
  SERVER_KINDS,
  type BenchServerKind,
  type CliAdapter
} from "./protocol.js"

/** Starts any benchmarked server in a process of its own: server.ts's kinds with fork(), the CLI with spawn(). */

export const BENCH_SERVER_KINDS: ReadonlyArray<BenchServerKind> = [
  ...SERVER_KINDS,
  ...CLI_ADAPTERS.flatMap((adapter) => [cliKind(adapter, "default"), cliKind(adapter, "warn")]),
  CLI_PGLITE,
  CLI_POSTGRES
]

export const isBenchServerKind = (value: string | undefined): value is BenchServerKind =>
  BENCH_SERVER_KINDS.some((kind) => kind === value)

/** How the CLI is started for a kind: its adapter, its log level, and its store. */
export interface CliKindOptions {
  readonly adapter: CliAdapter
  readonly quiet: boolean
  readonly store: "memory" | "pglite" | "postgres"
}

/** `cli-koa-warn` -> koa at `--log-level warn`; undefined for server.ts's kinds. */
export const cliOptionsOf = (kind: BenchServerKind): CliKindOptions | undefined => {
  if (kind === CLI_PGLITE) return { adapter: "fastify", quiet: true, store: "pglite" }
  if (kind === CLI_POSTGRES) return { adapter: "fastify", quiet: false, store: "postgres" }
  const adapter = CLI_ADAPTERS.find((name) => kind === cliKind(name, "default") || kind === cliKind(name, "warn"))
  return adapter === undefined ? undefined : { adapter, quiet: kind === cliKind(adapter, "warn"), store: "memory" }
}

export interface BenchServer {
  readonly kind: BenchServerKind
  readonly url: string
  readonly pid: number | undefined
  /** The CLI's log file, for the servers that write one. */
  readonly log: Pick<CliServer, "markLog" | "logSinceMark" | "clearLog"> | undefined
  readonly stop: () => Promise<void>
}

export interface ServerContext {
  readonly users: number
  /** A directory for the CLI's seed file, log files and PGlite data directory. */
  readonly workDir: string
  /** Options for Node itself (e.g. --cpu-prof). */
  readonly execArgv: ReadonlyArray<string>
  /** The PostgreSQL server of the SQL rows (`--database-url`), and the run's suffix for their schemas. */
  readonly databaseUrl: string | undefined
  readonly runId: string
}

/** The schema a PostgreSQL server of the run works in (dropped at the end of the run). */
export const schemaOf = (kind: BenchServerKind, context: ServerContext): string =>
  `bench_${kind.replace(/-/g, "_")}_${context.runId}`

const needDatabase = (kind: BenchServerKind, context: ServerContext): string => {
  if (context.databaseUrl === undefined) throw new Error(`${kind} needs --database-url`)
  return context.databaseUrl
}

/** The seed file the CLI servers load: the users server.ts seeds into its stores. */
export const writeSeedFile = (context: ServerContext): string => {
  const path = join(context.workDir, "seed.json")
  writeFileSync(path, JSON.stringify(seedInput(context.users)))
  return path
}

export const startBenchServer = async (kind: BenchServerKind, context: ServerContext): Promise<BenchServer> => {
  const cli = cliOptionsOf(kind)
  if (cli !== undefined) {
    const { store, ...options } = cli
    const server = await startCliServer({
      ...options,
      // A directory of the run's own, created and initialised by this start (PGlite's initdb: seconds).
      ...(store === "pglite" && { dataDir: join(context.workDir, `${kind}-data`) }),
      ...(store === "postgres" && {
        postgres: { url: needDatabase(kind, context), schema: schemaOf(kind, context) }
      }),
      seedFile: join(context.workDir, "seed.json"),
      logFile: join(context.workDir, `${kind}.log`),
      execArgv: context.execArgv
    })
    return {
      kind,
      url: server.url,
      pid: server.pid,
      log: server,
      stop: async () => {
        const code = await server.stop()
        if (code !== 0)
          console.error(`${kind} exited with ${code} (its stderr: ${join(context.workDir, `${kind}.log`)})`)
      }
    }
  }
  if (!isServerKind(kind)) throw new Error(`unknown server ${kind}`)
  const where =
    kind === "fastify-bare-pg"
      ? [JSON.stringify({ url: needDatabase(kind, context), schema: schemaOf(kind, context) })]
      : kind === "fastify-bare-pglite"
        ? [join(context.workDir, `${kind}-data`)]
        : []
  const child = forkChild("server.js", [kind, String(context.users), ...where], context.execArgv)
  const { url } = await messageOf(child, "ready")
  return { kind, url, pid: child.pid, log: undefined, stop: () => stopChild(child) }
}
