import { spawn } from "node:child_process"
import { closeSync, fstatSync, openSync, readSync, truncateSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { CliAdapter } from "./protocol.js"

/**
 * The server as a user runs it: `npm start -- --adapter A --port 0 --seed FILE` is `node packages/server/dist/main.js`
 * with those flags, so the bench spawns exactly that, with the Node running the bench (the project's pinned Node 24
 * under `npm run bench`), stdout read for its `listening on` line, and stderr, where the access log goes, opened on a
 * file, as `npm start 2>>file` would: no pipe for the bench to drain, nothing thrown away before it is written.
 */

const here = dirname(fileURLToPath(import.meta.url))
export const serverMainJs = join(here, "..", "..", "packages", "server", "dist", "main.js")

/**
 * The environment of a user's shell, less anything that would configure the server: the CLI reads every option from
 * the environment too (ADAPTER, LOG_LEVEL, WORKERS, OTEL_..., packages/server/README.md), and what the bench itself
 * was started with must not reach it.
 */
const PASSED_VARIABLES = ["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR"]
const userEnvironment = (): NodeJS.ProcessEnv =>
  Object.fromEntries(
    PASSED_VARIABLES.flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]]))
  )

/** What the access log wrote during a measurement. */
export interface LogWritten {
  readonly bytes: number
  readonly lines: number
}

export interface CliServer {
  readonly url: string
  readonly pid: number | undefined
  /** Marks the start of a measurement in the log file. */
  readonly markLog: () => void
  /**
   * What the log received since `markLog`, then empties the file (a run writes hundreds of megabytes otherwise).
   * Lines the server still holds in a buffer arrive late by the same delay at both ends, so the count stays fair.
   */
  readonly logSinceMark: () => LogWritten
  /** Empties the log file (after a warm-up). */
  readonly clearLog: () => void
  /** SIGTERM (the server drains, flushes its log and exits); resolves with its exit code. */
  readonly stop: () => Promise<number | null>
}

const countLines = (fd: number, from: number, to: number): number => {
  const buffer = Buffer.allocUnsafe(1 << 20)
  let lines = 0
  for (let position = from; position < to;) {
    const read = readSync(fd, buffer, 0, Math.min(buffer.length, to - position), position)
    if (read === 0) break
    for (let index = buffer.indexOf(10); index !== -1 && index < read; index = buffer.indexOf(10, index + 1)) lines++
    position += read
  }
  return lines
}

export interface CliServerOptions {
  readonly adapter: CliAdapter
  readonly seedFile: string
  /** Where stderr goes (appended). */
  readonly logFile: string
  /** `--log-level warn`; otherwise the CLI's default level. */
  readonly quiet: boolean
  /** `--store pglite --data-dir DIR`; otherwise the default store, memory. */
  readonly dataDir?: string
  /** `--store postgres --database-url URL --database-schema SCHEMA`. */
  readonly postgres?: { readonly url: string; readonly schema: string }
  /** Options for Node itself (e.g. --cpu-prof). */
  readonly execArgv?: ReadonlyArray<string>
}

export const startCliServer = (options: CliServerOptions): Promise<CliServer> => {
  const stderr = openSync(options.logFile, "a")
  const args = [
    ...(options.execArgv ?? []),
    serverMainJs,
    "--adapter",
    options.adapter,
    "--port",
    "0",
    "--seed",
    options.seedFile,
    ...(options.quiet ? ["--log-level", "warn"] : []),
    ...(options.dataDir === undefined ? [] : ["--store", "pglite", "--data-dir", options.dataDir]),
    ...(options.postgres === undefined
      ? []
      : ["--store", "postgres", "--database-url", options.postgres.url, "--database-schema", options.postgres.schema])
  ]
  const child = spawn(process.execPath, args, { env: userEnvironment(), stdio: ["ignore", "pipe", stderr] })
  // The child holds its own copy of the descriptor; this one is only for reading the file.
  closeSync(stderr)
  const reader = openSync(options.logFile, "r")
  let mark = 0
  const clearLog = (): void => {
    truncateSync(options.logFile, 0)
    mark = 0
  }
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  const server = (url: string): CliServer => ({
    url,
    pid: child.pid,
    markLog: () => {
      mark = fstatSync(reader).size
    },
    logSinceMark: () => {
      const end = fstatSync(reader).size
      const written = { bytes: end - mark, lines: countLines(reader, mark, end) }
      clearLog()
      return written
    },
    clearLog,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM")
      const code = await exited
      closeSync(reader)
      return code
    }
  })
  return new Promise((resolve, reject) => {
    let out = ""
    let url: string | undefined
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      if (url !== undefined) return
      out += chunk
      url = /^listening on (http:\/\/\S+)$/m.exec(out)?.[1]
      if (url !== undefined) resolve(server(url))
    })
    void exited.then((code) => {
      if (url !== undefined) return
      closeSync(reader)
      reject(
        new Error(`the ${options.adapter} CLI exited (${code}) before listening; its stderr is in ${options.logFile}`)
      )
    })
  })
}
