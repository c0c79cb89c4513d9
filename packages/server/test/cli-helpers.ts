import { afterAll, beforeAll } from "@effect/vitest"
import { execFileSync, spawn, type ChildProcess } from "node:child_process"
import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
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

/** Spawns `node packages/server/dist/main.js` with cheap scrypt cost and nothing inherited from the option variables. */
export const spawnCli = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Cli =>
  watchProcess(process.execPath, [mainJs, ...args], env)

/**
 * Spawns `npm start -- ARGS` as a user or a supervisor does (`CMD ["npm", "start"]`): the child is npm itself, with the
 * server below it. npm is the one that ran this test when there is one (`npm_execpath`), else the `npm` on the PATH.
 */
export const spawnNpmStart = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Cli => {
  const npmCli = process.env["npm_execpath"]
  return npmCli !== undefined && npmCli.endsWith(".js")
    ? watchProcess(process.execPath, [npmCli, "start", "--silent", "--", ...args], env)
    : watchProcess("npm", ["start", "--silent", "--", ...args], env)
}

const watchProcess = (command: string, args: ReadonlyArray<string>, env: Record<string, string>): Cli => {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !OPTION_VARIABLES.includes(name)))
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { ...inherited, SCRYPT_N: "1024", SCRYPT_P: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"]
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

  const listening = waitFor(() => /^listening on (http:\/\/\S+)\n/.exec(out)?.[1], "it printed the listening line")
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
  socket.on("error", () => {})
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
    destroy: () => socket.destroy()
  }
}

/** A complete GET of the health route, so a test knows the server has accepted the connection. */
export const healthRequest = "GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** Kills (SIGKILL) the CLIs a failed test may have left running and waits for each: none outlives its suite or holds its schema. */
export const killLeftovers = async (clis: ReadonlyArray<Cli>): Promise<void> => {
  for (const cli of clis) if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill("SIGKILL")
  await Promise.all(clis.map((cli) => cli.exited))
}

export const stopped = (cli: Cli, signal: NodeJS.Signals = "SIGTERM"): Promise<Exited> => {
  cli.child.kill(signal)
  return cli.exited
}
