import { afterAll, beforeAll } from "@effect/vitest"
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

export const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
export const mainJs = join(repoRoot, "packages/server/dist/main.js")

/** The tests spawn the compiled CLI, so they build it first (incremental: quick when nothing changed). */
export const buildServer = (): void => {
  execFileSync(process.execPath, [join(repoRoot, "node_modules/typescript/bin/tsc"), "-b", "packages/server"], {
    cwd: repoRoot,
    stdio: "pipe"
  })
}

export const USER_TOKEN = "cli-test-user-token-4b7d"
export const OTHER_USER_TOKEN = "cli-test-other-token-91e2"
export const CLIENT_TOKEN = "cli-test-client-token-c0a5"

export const testSeed = {
  users: [
    { id: "u_1", token: USER_TOKEN },
    { id: "u_2", token: OTHER_USER_TOKEN }
  ],
  clients: [{ id: "web", token: CLIENT_TOKEN }],
  payment_methods: [
    { id: "pm_1", user_id: "u_1", is_default: true },
    { id: "pm_2", user_id: "u_1" },
    { id: "pm_3", user_id: "u_2" }
  ]
}

/** A temporary directory for seed files, removed by `cleanup`. */
export const makeTempDir = async () => {
  const dir = await mkdtemp(join(tmpdir(), "accord-cli-"))
  return {
    dir,
    write: async (name: string, content: unknown) => {
      const path = join(dir, name)
      await writeFile(path, typeof content === "string" ? content : JSON.stringify(content))
      return path
    },
    cleanup: () => rm(dir, { recursive: true, force: true })
  }
}

/**
 * For a suite that spawns the CLI: builds it, and writes `testSeed` to a temporary directory, before the suite's tests
 * (in the scope this is called from); removes the directory after them. Read `temp` and `seedPath` inside tests.
 */
export const useBuiltServerAndSeed = () => {
  let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined
  let seedPath = ""
  beforeAll(async () => {
    buildServer()
    temp = await makeTempDir()
    seedPath = await temp.write("seed.json", testSeed)
  }, 120_000)
  afterAll(() => temp?.cleanup())
  return {
    get temp() {
      if (temp === undefined) throw new Error("the suite's beforeAll has not run")
      return temp
    },
    get seedPath() {
      return seedPath
    }
  }
}

/** Options the environment might carry into the child; each test says exactly what it wants. */
const OPTION_VARIABLES = [
  "ADAPTER",
  "HOST",
  "PORT",
  "STORE",
  "DATABASE_URL",
  "DATABASE_SCHEMA",
  "DATABASE_QUERY_TIMEOUT_MS",
  "CREDENTIAL_CACHE_TTL_MS",
  "DATA_DIR",
  "SEED_FILE",
  "DRAIN_TIMEOUT_MS",
  "BODY_LIMIT",
  "MAX_HEADER_SIZE",
  "MAX_PATH_LENGTH",
  "REQUEST_TIMEOUT_MS",
  "HEADERS_TIMEOUT_MS",
  "MAX_CONNECTIONS",
  "RATE_LIMIT_CAPACITY",
  "RATE_LIMIT_REFILL_PER_SECOND",
  "RATE_LIMIT_STORE",
  "REDIS_URL",
  "LOG_LEVEL",
  "LOG_REQUESTS",
  "SCRYPT_N",
  "SCRYPT_R",
  "SCRYPT_P",
  "SCRYPT_MAX_CONCURRENT",
  "SCRYPT_MAX_QUEUED",
  "AUTH",
  "METRICS_PORT",
  "METRICS_HOST",
  "WORKERS",
  "JWT_SECRET",
  "JWKS_URL",
  "JWT_ISSUER",
  "JWT_AUDIENCE",
  "JWT_ALGORITHMS",
  "JWT_CLIENT_CLAIM",
  "JWT_CLIENT_SCOPE",
  "JWT_CLOCK_TOLERANCE_S",
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
  "OTEL_SERVICE_NAME",
  "OTEL_TRACES_SAMPLER",
  "OTEL_TRACES_SAMPLER_ARG",
  "OTEL_TRACES_EXPORTER",
  "OTEL_SDK_DISABLED"
]

export interface Exited {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface Cli {
  readonly child: ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<Exited>
  /** Resolves with the URL of the `listening on` line; rejects if the process exits first. */
  readonly listening: Promise<string>
  /** Resolves once stderr has a JSON log line whose `msg` is `message`. */
  readonly logged: (message: string) => Promise<void>
  /** Every stderr line parsed as JSON (throws on a line that is not JSON). */
  readonly logLines: () => ReadonlyArray<Record<string, unknown>>
}

/** How a test starts a process: its working directory (the repository's root by default), its own process group. */
export interface SpawnOptions {
  readonly cwd?: string
  /**
   * In a new session and process group of its own (setsid), as a supervisor or a terminal starts a service: `kill
   * -SIG -PID` then signals every process the command started, and nothing of the test's.
   */
  readonly detached?: boolean
}

/** Spawns `node packages/server/dist/main.js` with cheap scrypt cost and nothing inherited from the option variables. */
export const spawnCli = (
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  options: SpawnOptions = {}
): Cli => spawnCommand(process.execPath, [mainJs, ...args], env, options)

/**
 * npm's command line as the test's own npm runs (`npm_execpath`, on the Node.js that runs the test), else the `npm`
 * or `npx` on the PATH: `[command, ...leading arguments]`.
 */
export const npmCommand = (which: "npm" | "npx"): readonly [string, ...Array<string>] => {
  const npmCli = process.env["npm_execpath"]
  return npmCli !== undefined && npmCli.endsWith("npm-cli.js")
    ? [process.execPath, join(dirname(npmCli), `${which}-cli.js`)]
    : [which]
}

/**
 * Spawns `npm start [--silent] -- ARGS` as a user or a supervisor does (`CMD ["npm", "start"]`): the child is npm
 * itself, with the server below it.
 */
export const spawnNpmStart = (
  args: ReadonlyArray<string>,
  env: Record<string, string> = {},
  options: SpawnOptions & { readonly silent?: boolean } = {}
): Cli => {
  const [npm, ...npmArgs] = npmCommand("npm")
  const silent = (options.silent ?? true) ? ["--silent"] : []
  return spawnCommand(npm, [...npmArgs, "start", ...silent, "--", ...args], env, options)
}

/**
 * Spawns any command as the CLI tests spawn the server: cheap scrypt cost, none of the server's option variables
 * inherited, stdout and stderr captured.
 */
export const spawnCommand = (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string>,
  options: SpawnOptions = {}
): Cli => {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !OPTION_VARIABLES.includes(name)))
  const child = spawn(command, args, {
    cwd: options.cwd ?? repoRoot,
    env: { ...inherited, SCRYPT_N: "1024", SCRYPT_P: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: options.detached ?? false
  })
  let out = ""
  let err = ""
  const waiters = new Set<() => void>()
  const notify = () => {
    for (const waiter of waiters) waiter()
  }
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk
    notify()
  })
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    err += chunk
    notify()
  })
  const exited = new Promise<Exited>((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })))
  let hasExited = false
  void exited.then(() => {
    hasExited = true
    notify()
  })

  const waitFor = <A>(check: () => A | undefined, what: string): Promise<A> =>
    new Promise((resolve, reject) => {
      const attempt = () => {
        const found = check()
        if (found !== undefined) {
          waiters.delete(attempt)
          resolve(found)
        } else if (hasExited) {
          waiters.delete(attempt)
          reject(new Error(`the process exited before ${what}; stderr:\n${err}`))
        }
      }
      waiters.add(attempt)
      attempt()
    })

  const logLines = () =>
    err
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>)

  // Its own line, wherever in stdout: `npm start` prints its banner before it.
  const listening = waitFor(() => /^listening on (http:\/\/\S+)\n/m.exec(out)?.[1], "it printed the listening line")
  // Tests of failed starts never wait for it; awaiting it still rejects.
  listening.catch(() => {})

  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    listening,
    logged: (message) =>
      waitFor(
        () =>
          err
            .split("\n")
            .some((line) => line.startsWith("{") && (JSON.parse(line) as { msg?: unknown }).msg === message)
            ? true
            : undefined,
        `it logged "${message}"`
      ).then(() => undefined),
    logLines
  }
}

/** A raw keep-alive connection: write any bytes, wait for text in what came back, see everything once closed. */
export const openConnection = async (url: string) => {
  const { hostname, port } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port) })
  await new Promise<void>((resolve, reject) => socket.once("connect", resolve).once("error", reject))
  let received = ""
  const waiters = new Set<() => void>()
  socket.setEncoding("utf8").on("data", (chunk: string) => {
    received += chunk
    for (const waiter of waiters) waiter()
  })
  // Kept for the tests that tell a reset (ECONNRESET) from an orderly close.
  let error: string | undefined
  socket.on("error", (cause: Error & { code?: string }) => void (error ??= cause.code ?? cause.message))
  const closed = new Promise<string>((resolve) => socket.once("close", () => resolve(received)))
  return {
    send: (text: string) => void socket.write(text),
    received: (text: string) =>
      new Promise<void>((resolve, reject) => {
        const check = () => {
          if (received.includes(text)) {
            waiters.delete(check)
            resolve()
          }
        }
        waiters.add(check)
        check()
        void closed.then(() => reject(new Error(`the connection closed before "${text}" arrived; got:\n${received}`)))
      }),
    closed,
    /** The connection's error, if it had one (`ECONNRESET`: the server reset it). */
    error: () => error,
    destroy: () => socket.destroy()
  }
}

/** A complete GET of the health route, so a test knows the server has accepted the connection. */
export const healthRequest = "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** Whether a process with this pid still exists (signal 0 checks without sending anything). */
export const isRunning = (pid: unknown): boolean => {
  try {
    process.kill(Number(pid), 0)
    return true
  } catch {
    return false
  }
}

/** Whether any process is left in the process group `pgid` (a detached child's pid). */
export const groupIsRunning = (pgid: number): boolean => pgid > 1 && isRunning(-pgid)

/** SIGKILL to every process left in the group of a detached child: a failed test leaves nothing running. */
export const killGroup = (pgid: number | undefined): void => {
  if (pgid !== undefined && groupIsRunning(pgid)) process.kill(-pgid, "SIGKILL")
}

/** Kills (SIGKILL) the CLIs a failed test may have left running and waits for each: none outlives its suite or holds its schema. */
export const killLeftovers = async (clis: ReadonlyArray<Cli>): Promise<void> => {
  for (const cli of clis) if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill("SIGKILL")
  await Promise.all(clis.map((cli) => cli.exited))
}

export const stopped = (cli: Cli, signal: NodeJS.Signals = "SIGTERM"): Promise<Exited> => {
  cli.child.kill(signal)
  return cli.exited
}
