import autocannon from "autocannon"
import { spawn, type ChildProcess } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { availableParallelism, tmpdir, totalmem } from "node:os"
import { join } from "node:path"
import { serverMainJs as mainJs } from "./cli-server.js"
import { FLOOD_CONNECTIONS, FLOOD_REQUESTS_PER_CONNECTION, measureFloodWaits, type FloodWaits } from "./flood.js"
import { LANGUAGE_PATH, PAYMENT_METHOD_PATH, paymentMethodIds, seedInput, userToken } from "./fixtures.js"

/**
 * `npm run soak`: for each adapter, the real CLI (packages/server/dist/main.js, store-memory, a seed of many users)
 * in a child process under SOAK_SECONDS of mixed load from autocannon in this process: users reading and changing
 * their preferences and default payment methods, a few plan entries, and invalid requests that must get their 4xx.
 * Any other status, a socket error or a timeout is a failure (exit code 1). The child's resident memory is sampled
 * every second from /proc; the report shows its curve and whether it levels off. Then, on the same server, another
 * client's wait while 100 connections pipeline requests they never read (`flood.ts`). Not part of `npm test` or CI.
 */

const numberFrom = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`)
  return value
}
const config = {
  seconds: numberFrom("SOAK_SECONDS", 60),
  users: Math.round(numberFrom("SOAK_USERS", 10_000)),
  connections: Math.round(numberFrom("SOAK_CONNECTIONS", 16)),
  planEntriesPerSecond: numberFrom("SOAK_PLAN_ENTRIES_PER_SECOND", 2),
  invalidPerSecond: numberFrom("SOAK_INVALID_PER_SECOND", 100),
  // The soak looks for leaks, not at the cost of a hash: a cheaper one than production keeps the CPU for the rest.
  scryptN: String(Math.round(numberFrom("SOAK_SCRYPT_N", 16_384))),
  adapters: (process.env["SOAK_ADAPTERS"] ?? "fastify,koa").split(",").map((name) => name.trim())
}

/** How many of each status one kind of request got, and what it should get. */
interface Tally {
  readonly stream: string
  readonly label: string
  readonly expected: number
  readonly statuses: Map<number, number>
}

type SoakRequest = autocannon.Request & {
  readonly label: string
  readonly expected: number
  /**
   * The server answers it with `Connection: close` (a body it refuses unread). autocannon writes its next request
   * into the closing connection before reconnecting, so such a stream runs at about half its rate and its latencies
   * (measured from the lost write) mean nothing; its statuses are still exact.
   */
  readonly closes?: true
}

const makeTallies = () => {
  const tallies = new Map<string, Tally>()
  const tally = (stream: string, label: string, expected: number): Tally => {
    const key = `${stream}/${label}`
    let found = tallies.get(key)
    if (found === undefined) {
      found = { stream, label, expected, statuses: new Map() }
      tallies.set(key, found)
    }
    return found
  }
  /** Counts every response of `request` under its label. */
  const counted = (
    stream: string,
    { label, expected, closes: _closes, ...request }: SoakRequest
  ): autocannon.Request => {
    const entry = tally(stream, label, expected)
    return {
      ...request,
      onResponse: (status) => {
        entry.statuses.set(status, (entry.statuses.get(status) ?? 0) + 1)
      }
    }
  }
  return { tallies, counted }
}

const pick = <A>(values: ReadonlyArray<A>): A => values[Math.floor(Math.random() * values.length)] as A
const json = { "content-type": "application/json" }
const auth = (index: number) => ({ authorization: `Bearer ${userToken(index)}` })

interface UserContext {
  user?: number
}
const userOf = (context: object): number => (context as UserContext).user ?? 0

/** One user per pass (chosen at random, kept in autocannon's per-pass context): read, change, list, set a default. */
const userRequests = (users: number): ReadonlyArray<SoakRequest> => [
  {
    label: "GET preferences",
    expected: 200,
    method: "GET",
    path: LANGUAGE_PATH,
    setupRequest: (request, context) => {
      const user = Math.floor(Math.random() * users)
      ;(context as UserContext).user = user
      return { ...request, headers: auth(user) }
    }
  },
  {
    label: "PUT preferences",
    expected: 200,
    method: "PUT",
    path: LANGUAGE_PATH,
    setupRequest: (request, context) => ({
      ...request,
      headers: { ...auth(userOf(context)), ...json },
      body: JSON.stringify({
        language: pick(["en", "fr", "de-DE", "pt-BR"]),
        timezone: pick([-300, 0, 60, 330]),
        mfa_enabled: pick([true, false])
      })
    })
  },
  {
    label: "GET payment methods",
    expected: 200,
    method: "GET",
    path: "/api/payments/v1/payment-methods/",
    setupRequest: (request, context) => ({ ...request, headers: auth(userOf(context)) })
  },
  {
    label: "PUT default payment method",
    expected: 200,
    method: "PUT",
    setupRequest: (request, context) => ({
      ...request,
      path: PAYMENT_METHOD_PATH(pick(paymentMethodIds(userOf(context)))),
      headers: auth(userOf(context))
    })
  }
]

let planEntrySequence = 0
const planEntryRequests = (users: number): ReadonlyArray<SoakRequest> => [
  {
    label: "POST plan entry",
    expected: 201,
    method: "POST",
    path: "/api/plans/v1/subscription-plans/public/",
    setupRequest: (request) => ({
      ...request,
      headers: { ...auth(Math.floor(Math.random() * users)), ...json },
      body: JSON.stringify({
        email: `soak-${process.pid}-${planEntrySequence++}@example.com`,
        password: "soak-Passw0rd"
      })
    })
  }
]

/** Requests that must be refused, each with the status the contract gives it. */
const invalidRequests = (users: number): ReadonlyArray<SoakRequest> => {
  const someone = auth(users - 1)
  return [
    {
      label: "invalid JSON",
      expected: 400,
      method: "PUT",
      path: LANGUAGE_PATH,
      headers: { ...someone, ...json },
      body: '{"language":'
    },
    {
      label: "timezone not a multiple of 15",
      expected: 400,
      method: "PUT",
      path: LANGUAGE_PATH,
      headers: { ...someone, ...json },
      body: '{"timezone":7}'
    },
    { label: "no credential", expected: 401, method: "GET", path: LANGUAGE_PATH },
    {
      label: "unknown token",
      expected: 401,
      method: "GET",
      path: LANGUAGE_PATH,
      headers: { authorization: "Bearer not-a-seeded-token" }
    },
    {
      label: "another user's payment method",
      expected: 404,
      method: "PUT",
      path: PAYMENT_METHOD_PATH(paymentMethodIds(0)[0]),
      headers: someone
    },
    { label: "unknown route", expected: 404, method: "GET", path: "/api/nowhere" },
    { label: "method not allowed", expected: 405, method: "DELETE", path: LANGUAGE_PATH, headers: someone },
    {
      label: "body over the limit",
      expected: 413,
      closes: true,
      method: "PUT",
      path: LANGUAGE_PATH,
      headers: { ...someone, ...json },
      body: `{"language":"${"x".repeat(20_000)}"}`
    },
    {
      label: "not JSON media type",
      expected: 415,
      closes: true,
      method: "PUT",
      path: LANGUAGE_PATH,
      headers: { ...someone, "content-type": "text/plain" },
      body: "{}"
    }
  ]
}

// ---------------------------------------------------------------------------------------------------------------

interface Server {
  readonly child: ChildProcess
  readonly url: string
  /** Log lines at level error or fatal, and all lines seen. */
  readonly logs: { errors: Array<string>; lines: number }
}

const startServer = (adapter: string, seedPath: string): Promise<Server> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [mainJs, "--adapter", adapter, "--port", "0", "--seed", seedPath], {
      env: { ...process.env, LOG_LEVEL: "info", SCRYPT_N: config.scryptN, SCRYPT_P: "1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const logs = { errors: [] as Array<string>, lines: 0 }
    let partial = ""
    // Every request is logged (info, the production default): read it all, or the pipe fills and the server stalls.
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = (partial + chunk).split("\n")
      partial = lines.pop() ?? ""
      logs.lines += lines.length
      for (const line of lines) if (/"level":(50|60)/.test(line) && logs.errors.length < 20) logs.errors.push(line)
    })
    let out = ""
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk
      const match = /^listening on (\S+)\n/.exec(out)
      if (match?.[1] !== undefined) resolve({ child, url: match[1], logs })
    })
    child.once("exit", (code) => reject(new Error(`the ${adapter} server exited with ${code} before listening`)))
  })

const stopServer = (server: Server): Promise<number | null> =>
  new Promise((resolve) => {
    if (server.child.exitCode !== null) return resolve(server.child.exitCode)
    server.child.once("exit", (code) => resolve(code))
    server.child.kill("SIGTERM")
  })

/** VmRSS of a process in MiB, from /proc (Linux only). */
const residentMiB = (pid: number): number => {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return Number(match?.[1] ?? Number.NaN) / 1024
}

/** Least-squares slope of (second, MiB) points, in MiB per minute. */
const slopePerMinute = (points: ReadonlyArray<readonly [number, number]>): number => {
  const n = points.length
  if (n < 2) return 0
  const meanX = points.reduce((sum, [x]) => sum + x, 0) / n
  const meanY = points.reduce((sum, [, y]) => sum + y, 0) / n
  const covariance = points.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0)
  const variance = points.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0)
  return (covariance / variance) * 60
}

const run = (options: autocannon.Options): Promise<autocannon.Result> =>
  new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error === null || error === undefined ? resolve(result) : reject(error)))
  })

interface AdapterResult {
  readonly adapter: string
  readonly samples: ReadonlyArray<readonly [number, number]>
  readonly tallies: ReadonlyArray<Tally>
  readonly results: ReadonlyArray<readonly [string, autocannon.Result]>
  readonly logErrors: ReadonlyArray<string>
  readonly logLines: number
  readonly flood: FloodWaits
  readonly exitCode: number | null
}

const soak = async (adapter: string, seedPath: string): Promise<AdapterResult> => {
  const server = await startServer(adapter, seedPath)
  const pid = server.child.pid ?? 0
  const samples: Array<readonly [number, number]> = []
  const started = performance.now()
  const sample = () => samples.push([(performance.now() - started) / 1000, residentMiB(pid)])
  sample()
  const sampler = setInterval(sample, 1000)
  const { tallies, counted } = makeTallies()
  const common = { url: server.url, duration: config.seconds, timeout: 10 }
  const streams = [
    [
      "users",
      run({
        ...common,
        connections: config.connections,
        requests: userRequests(config.users).map((request) => counted("users", request))
      })
    ],
    [
      "plan entries",
      run({
        ...common,
        connections: 1,
        overallRate: config.planEntriesPerSecond,
        requests: planEntryRequests(config.users).map((request) => counted("plan entries", request))
      })
    ],
    // One instance per invalid request: some close the connection, and autocannon, reconnecting, would count the
    // next answers against the wrong request of a sequence.
    ...invalidRequests(config.users).map(
      (request, _index, all) =>
        [
          `invalid: ${request.label}${request.closes === true ? " (closes)" : ""}`,
          run({
            ...common,
            connections: 1,
            overallRate: Math.max(1, Math.round(config.invalidPerSecond / all.length)),
            requests: [counted("invalid", request)]
          })
        ] as const
    )
  ] as const
  const results = await Promise.all(streams.map(async ([name, pending]) => [name, await pending] as const))
  clearInterval(sampler)
  sample()
  const flood = await measureFloodWaits(server.url)
  const exitCode = await stopServer(server)
  return {
    adapter,
    samples,
    tallies: [...tallies.values()],
    results,
    logErrors: server.logs.errors,
    logLines: server.logs.lines,
    flood,
    exitCode
  }
}

// ---------------------------------------------------------------------------------------------------------------

const mib = (value: number): string => value.toFixed(1)
const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    `| ${cells.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join(" | ")} |`
  return [line(header), `|${widths.map((width) => "-".repeat(width + 2)).join("|")}|`, ...rows.map(line)].join("\n")
}

interface Memory {
  readonly start: number
  readonly min: number
  readonly max: number
  readonly end: number
  readonly lastHalfSlope: number
  readonly levelsOff: boolean
}

/**
 * Levels off when the trend over the last half, projected over that half, is under 5% of its mean: the first half
 * takes the warm-up (JIT, every user's preferences created, heap sized), the second must not keep climbing.
 */
const memoryOf = (samples: ReadonlyArray<readonly [number, number]>): Memory => {
  const values = samples.map(([, value]) => value)
  const lastHalf = samples.filter(([second]) => second >= config.seconds / 2)
  const lastHalfSlope = slopePerMinute(lastHalf)
  const lastHalfMean = lastHalf.reduce((sum, [, value]) => sum + value, 0) / Math.max(1, lastHalf.length)
  return {
    start: values[0] ?? Number.NaN,
    min: Math.min(...values),
    max: Math.max(...values),
    end: values.at(-1) ?? Number.NaN,
    lastHalfSlope,
    levelsOff: (lastHalfSlope / 60) * (config.seconds / 2) < 0.05 * lastHalfMean
  }
}

const unexpectedOf = (tally: Tally): number =>
  [...tally.statuses].reduce((sum, [status, count]) => sum + (status === tally.expected ? 0 : count), 0)

const main = async (): Promise<void> => {
  if (process.platform !== "linux") throw new Error("the soak reads resident memory from /proc: Linux only")
  const dir = mkdtempSync(join(tmpdir(), "accord-soak-"))
  const seedPath = join(dir, "seed.json")
  writeFileSync(seedPath, JSON.stringify(seedInput(config.users)))
  console.log(
    `soak: ${config.seconds} s per adapter, ${config.users} users, ${config.connections} user connections, ` +
      `${config.planEntriesPerSecond} plan entries/s, ${config.invalidPerSecond} invalid requests/s; ` +
      `${availableParallelism()} CPUs, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}\n`
  )
  const outcomes: Array<AdapterResult> = []
  try {
    for (const adapter of config.adapters) {
      console.log(`${adapter}: running`)
      outcomes.push(await soak(adapter, seedPath))
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }

  let failed = false
  for (const outcome of outcomes) {
    console.log(`\n## ${outcome.adapter}\n`)
    console.log(
      table(
        ["stream", "request", "expected", "statuses", "unexpected"],
        outcome.tallies.map((tally) => [
          tally.stream,
          tally.label,
          String(tally.expected),
          [...tally.statuses].map(([status, count]) => `${status}: ${count}`).join(", "),
          String(unexpectedOf(tally))
        ])
      )
    )
    console.log()
    console.log(
      table(
        ["stream", "requests", "req/s", "p50 ms", "p99 ms", "max ms", "socket errors", "timeouts"],
        outcome.results.map(([name, result]) => [
          name,
          String(result.requests.total),
          result.requests.average.toFixed(0),
          ...(name.endsWith("(closes)")
            ? ["-", "-", "-"]
            : [String(result.latency.p50), String(result.latency.p99), String(result.latency.max)]),
          String(result.errors),
          String(result.timeouts)
        ])
      )
    )
    console.log("(closes: answered with Connection: close; autocannon loses a write per reconnect, so no latency)")
    const memory = memoryOf(outcome.samples)
    const curve = outcome.samples.filter((_, index) => index % 5 === 0 || index === outcome.samples.length - 1)
    console.log(
      `\nresident memory (MiB) every 5 s: ${curve.map(([second, value]) => `${Math.round(second)}s ${mib(value)}`).join(", ")}`
    )
    const unexpected = outcome.tallies.reduce((sum, tally) => sum + unexpectedOf(tally), 0)
    const transportErrors = outcome.results.reduce((sum, [, result]) => sum + result.errors + result.timeouts, 0)
    const answered = outcome.tallies.reduce(
      (sum, tally) => sum + [...tally.statuses.values()].reduce((a, b) => a + b, 0),
      0
    )
    console.log(
      `${answered} responses, ${unexpected} unexpected, ${transportErrors} socket errors or timeouts, ` +
        `${outcome.logLines} log lines (${outcome.logErrors.length} at error level), exit code ${outcome.exitCode}`
    )
    for (const line of outcome.logErrors) console.log(`  ${line}`)
    if (
      unexpected > 0 ||
      transportErrors > 0 ||
      outcome.logErrors.length > 0 ||
      outcome.exitCode !== 0 ||
      outcome.flood.notOk > 0 ||
      !memory.levelsOff
    )
      failed = true
  }

  console.log("\n## Resident memory of the server process\n")
  console.log(
    table(
      ["adapter", "start MiB", "min MiB", "max MiB", "end MiB", "slope, last half (MiB/min)", "levels off"],
      outcomes.map((outcome) => {
        const memory = memoryOf(outcome.samples)
        return [
          outcome.adapter,
          mib(memory.start),
          mib(memory.min),
          mib(memory.max),
          mib(memory.end),
          memory.lastHalfSlope.toFixed(2),
          memory.levelsOff ? "yes" : "NO"
        ]
      })
    )
  )
  console.log(
    `\n## Another client's wait while ${FLOOD_CONNECTIONS} connections pipeline ` +
      `${FLOOD_REQUESTS_PER_CONNECTION} unread requests each (docs/SECURITY.md, "Clients that never read")\n`
  )
  console.log(
    table(
      ["adapter", "idle p50 ms", "flood p50 ms", "flood max ms", "samples", "not 200"],
      outcomes.map(({ adapter, flood }) => [
        adapter,
        flood.idleP50Ms.toFixed(1),
        flood.p50Ms.toFixed(1),
        flood.maxMs.toFixed(0),
        String(flood.samples),
        String(flood.notOk)
      ])
    )
  )
  if (failed) {
    console.log("\nsoak FAILED: see above")
    process.exitCode = 1
  } else console.log("\nsoak passed: only expected statuses, no socket errors, clean exits, memory levels off")
}

main().catch((error: unknown) => {
  console.error(error)
  process.exitCode = 1
})
