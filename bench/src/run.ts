import { randomBytes } from "node:crypto"
import { fork } from "node:child_process"
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { availableParallelism, loadavg, release, tmpdir, totalmem } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { benchHeaders, scenarios as allScenarios, type Scenario } from "./fixtures.js"
import { behavedAs, calibrate, startBusyLoop, type Calibration } from "./machine.js"
import { isCompleteRun, parseBenchConfig, usage, type BenchConfig } from "./options.js"
import { cpuSecondsOf, forkChild, messageOf, runLoad, stopChild } from "./processes.js"
import { startStatementCounter } from "./pg-counter.js"
import {
  BARE_OF,
  CLI_BARE_OF,
  CLI_PGLITE,
  CLI_POSTGRES,
  cliKind,
  isSqlKind,
  SQL_BARE_OF,
  type AdapterKind,
  type BenchServerKind,
  type EventsResult,
  type StreamsResult,
  type MemoryResult,
  type MicroResult,
  type StagesResult
} from "./protocol.js"
import { renderReport, type HttpRun, type StatementCount } from "./report.js"
import {
  cliOptionsOf,
  schemaOf,
  startBenchServer,
  writeSeedFile,
  type BenchServer,
  type ServerContext
} from "./servers.js"

/**
 * `npm run bench [-- options]`: the CLI server as users run it (each adapter, default log level and `--log-level
 * warn`) and Accord's adapters without the CLI, against bare-framework baselines and two peer libraries (ts-rest on
 * Fastify, effect's HttpApi), each server in its own process, autocannon here; then micro benchmarks and store memory
 * in fresh child processes; prints the tables and an acceptance check, and writes bench/RESULTS.md. Options:
 * options.ts (`--help`) and README.md.
 */

const here = dirname(fileURLToPath(import.meta.url))

interface PinnedNode {
  readonly devDependencies?: { readonly node?: string }
}

const load1 = (): number => loadavg()[0] ?? 0
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const waitForQuietMachine = async (config: BenchConfig): Promise<void> => {
  if (config.maxLoad === undefined) return
  const deadline = Date.now() + 10 * 60_000
  while (load1() >= config.maxLoad && Date.now() < deadline) {
    console.log(`load average ${load1().toFixed(2)} >= ${config.maxLoad}; waiting`)
    await sleep(15_000)
  }
}

/**
 * The servers of the selected sections in measuring order: each next to its baseline, so that alternating the order
 * between rounds leaves their pairing unchanged.
 */
const ORDER: ReadonlyArray<BenchServerKind> = [
  "fastify-bare",
  "fastify-accord",
  "cli-fastify",
  "cli-fastify-warn",
  "fastify-bare-pglite",
  "cli-fastify-pglite-warn",
  "fastify-bare-pg",
  "cli-fastify-postgres",
  "fastify-tsrest",
  "koa-bare",
  "koa-accord",
  "cli-koa",
  "cli-koa-warn",
  "express-bare",
  "cli-express",
  "cli-express-warn",
  "hono-bare",
  "cli-fetch",
  "cli-fetch-warn",
  "effect-httpapi"
]

const HTTP_SECTION_KINDS: ReadonlyArray<BenchServerKind> = [
  "fastify-accord",
  "fastify-bare",
  "koa-accord",
  "koa-bare",
  "fastify-tsrest",
  "effect-httpapi"
]

/**
 * The CLI comparison: each selected adapter at both log levels, its bare framework, and ts-rest; with Fastify (the
 * default adapter), also the PGlite store next to the memory store and to bare Fastify on PGlite, and with
 * `--database-url` the CLI on PostgreSQL next to bare Fastify + pg.
 */
const cliSectionKinds = (config: BenchConfig): ReadonlyArray<BenchServerKind> => [
  ...config.adapters.flatMap((adapter) => [
    cliKind(adapter, "default"),
    cliKind(adapter, "warn"),
    CLI_BARE_OF[adapter],
    ...(adapter === "fastify" ? [CLI_PGLITE, SQL_BARE_OF[CLI_PGLITE]] : []),
    ...(adapter === "fastify" && config.databaseUrl !== undefined ? [CLI_POSTGRES, SQL_BARE_OF[CLI_POSTGRES]] : [])
  ]),
  "fastify-tsrest"
]

/** The servers a scenario is measured on: the SQL rows (bare-sql.ts) serve PUT language only (one user, or spread). */
const servingScenario = (kind: BenchServerKind, scenario: Scenario): boolean =>
  !isSqlKind(kind) || scenario.id.startsWith("language") || kind === CLI_PGLITE

const ordered = (kinds: Iterable<BenchServerKind>): ReadonlyArray<BenchServerKind> => {
  const wanted = new Set(kinds)
  return ORDER.filter((kind) => wanted.has(kind))
}

/** One autocannon load, and the servers measured under it in each round. */
interface LoadCase {
  readonly scenario: Scenario
  readonly connections: number
  readonly kinds: ReadonlyArray<BenchServerKind>
}

/**
 * The first connection count measures every server on every scenario; the others (50 by default) the CLI comparison
 * only, on the wide scenarios: what the acceptance reads, in a run that fits in about a quarter of an hour.
 */
const loadCases = (config: BenchConfig): ReadonlyArray<LoadCase> => {
  const cli = config.sections.has("cli") ? cliSectionKinds(config) : []
  const all = ordered([...(config.sections.has("http") ? HTTP_SECTION_KINDS : []), ...cli])
  if (all.length === 0) return []
  const [first = 10, ...others] = config.connections
  const wide = config.scenarios.filter((scenario) => config.wideScenarios.includes(scenario))
  const serving = (kinds: ReadonlyArray<BenchServerKind>, scenario: Scenario) =>
    kinds.filter((kind) => servingScenario(kind, scenario))
  return [
    ...config.scenarios.map((scenario) => ({ scenario, connections: first, kinds: serving(all, scenario) })),
    ...(cli.length === 0
      ? []
      : others.flatMap((connections) =>
          wide.map((scenario) => ({ scenario, connections, kinds: serving(ordered(cli), scenario) }))
        ))
  ]
}

/** Seconds the run should take, printed before it starts (server starts, micro and memory roughly). */
const estimateSeconds = (config: BenchConfig, cases: ReadonlyArray<LoadCase>): number => {
  const servers = new Set(cases.flatMap((entry) => entry.kinds)).size
  const initial = config.initialWarmupSeconds * servers * config.scenarios.length
  const perRound =
    cases.reduce((sum, entry) => sum + entry.kinds.length, 0) * (config.warmupSeconds + config.durationSeconds)
  const other =
    (config.sections.has("micro") ? 30 : 0) +
    (config.sections.has("stages") ? 120 : 0) +
    (config.sections.has("memory") ? 20 : 0) +
    // Measured: about 1 ms of wall time per SQL write pair, 0.2 ms per relayed event with its seeding, and a PGlite start.
    (config.sections.has("events")
      ? 10 + (config.eventWrites * (config.databaseUrl === undefined ? 1 : 2)) / 1000 + config.relayEvents / 5000
      : 0) +
    // A guess until measured: the streams opened, 20 changes one after the other, a change per user.
    (config.sections.has("streams") ? 10 + config.streams / 100 : 0)
  return initial + config.modes.length * config.rounds * perRound + servers * 1.5 + 10 + other
}

/** The baseline must answer what the server answers, or the comparison means nothing. */
// `etag`: Accord's conditional requests (docs/api.md) are a feature the bare baselines do not build; hashing the body
// for it (about 1 µs for a preferences body) is part of what Accord's rows pay.
const IGNORED_HEADERS = new Set(["date", "connection", "keep-alive", "x-request-id", "etag"])
const probe = async (url: string, scenario: Scenario) => {
  const request = scenario.requests[0]
  if (request === undefined) throw new Error(`${scenario.name}: no request`)
  const response = await fetch(url + request.path, { method: "PUT", headers: benchHeaders, body: request.body })
  const body = (await response.json()) as Record<string, unknown>
  return {
    status: response.status,
    headers: [...response.headers.entries()]
      .filter(([name]) => !IGNORED_HEADERS.has(name))
      .map(([name, value]) => (name === "content-length" ? name : `${name}: ${value}`))
      .sort(),
    keys: Object.keys(body)
  }
}

/**
 * What each server is checked against: an adapter (with or without the CLI) against its bare framework, everything
 * else against bare Fastify. The peers' headers are compared too, since today they match: ts-rest sends bare Fastify's
 * headers; effect's HttpApi sends the same set (its schemas carry bare-domain's content types, a router middleware
 * adds the other three), in another order (not compared) and with Node's `keep-alive: timeout=5` instead of Fastify's
 * 72 (keep-alive is among IGNORED_HEADERS). Where a peer cannot match bare, it is on paths the benchmark does not send
 * (README.md, "The peers"). When that server is not running, the first bare framework that is stands in: they all
 * answer the same.
 */
const referenceOf = (kind: BenchServerKind, running: ReadonlyArray<BenchServerKind>): BenchServerKind | undefined => {
  const cli = cliOptionsOf(kind)
  const preferred =
    cli !== undefined ? CLI_BARE_OF[cli.adapter] : kind in BARE_OF ? BARE_OF[kind as AdapterKind] : "fastify-bare"
  const bare = running.filter((other) => other.endsWith("-bare") && other !== kind)
  return running.includes(preferred) && preferred !== kind ? preferred : bare[0]
}

const checkEquivalent = async (
  servers: ReadonlyMap<BenchServerKind, BenchServer>,
  scenarios: ReadonlyArray<Scenario>
) => {
  const running = [...servers.keys()]
  for (const scenario of scenarios) {
    for (const kind of running) {
      if (!servingScenario(kind, scenario)) continue
      const reference = referenceOf(kind, running)
      if (reference === undefined) continue
      const [a, b] = await Promise.all([
        probe(servers.get(kind)?.url ?? "", scenario),
        probe(servers.get(reference)?.url ?? "", scenario)
      ])
      if (a.status !== 200 || JSON.stringify(a) !== JSON.stringify(b)) {
        throw new Error(
          `${scenario.name}: ${kind} and ${reference} answer differently:\n${JSON.stringify(a)}\n${JSON.stringify(b)}`
        )
      }
    }
  }
}

/** Requests of the statement probe, after as many unmeasured ones. */
const PROBE_REQUESTS = 100

/**
 * Statements and round trips per PUT language of each server on PostgreSQL, counted by a proxy (pg-counter.ts) in
 * front of a second instance of it on the same schema, one request at a time: outside the measured runs, which go to
 * PostgreSQL directly.
 */
const countStatements = async (
  kinds: ReadonlyArray<BenchServerKind>,
  context: ServerContext
): Promise<ReadonlyArray<StatementCount>> => {
  const counts: Array<StatementCount> = []
  const language = allScenarios.find((scenario) => scenario.id === "language")
  if (context.databaseUrl === undefined || language === undefined) return counts
  for (const kind of kinds.filter((sql) => sql === CLI_POSTGRES || sql === SQL_BARE_OF[CLI_POSTGRES])) {
    const counter = await startStatementCounter(context.databaseUrl)
    const server = await startBenchServer(kind, { ...context, databaseUrl: counter.url })
    try {
      const send = async (index: number) => {
        const request = language.requests[index % language.requests.length]
        if (request === undefined) return
        const response = await fetch(server.url + request.path, {
          method: "PUT",
          headers: benchHeaders,
          body: request.body
        })
        if (response.status !== 200) throw new Error(`${kind}: the statement probe got ${response.status}`)
        await response.arrayBuffer()
      }
      for (let index = 0; index < PROBE_REQUESTS; index++) await send(index)
      const before = counter.counts()
      for (let index = 0; index < PROBE_REQUESTS; index++) await send(index)
      const after = counter.counts()
      counts.push({
        kind,
        statementsPerRequest: (after.statements - before.statements) / PROBE_REQUESTS,
        roundTripsPerRequest: (after.roundTrips - before.roundTrips) / PROBE_REQUESTS
      })
      console.log(
        `${kind}: ${counts.at(-1)?.statementsPerRequest} statements, ${counts.at(-1)?.roundTripsPerRequest} round trips per PUT language`
      )
    } finally {
      await server.stop()
      await counter.close()
    }
  }
  return counts
}

/** Drops the PostgreSQL schemas the run's servers made. */
const dropSchemas = async (kinds: ReadonlyArray<BenchServerKind>, context: ServerContext): Promise<void> => {
  if (context.databaseUrl === undefined) return
  const pgKinds = kinds.filter((kind) => kind === CLI_POSTGRES || kind === SQL_BARE_OF[CLI_POSTGRES])
  if (pgKinds.length === 0) return
  const { default: pg } = await import("pg")
  const client = new pg.Client({ connectionString: context.databaseUrl })
  await client.connect()
  try {
    for (const kind of pgKinds) await client.query(`DROP SCHEMA IF EXISTS "${schemaOf(kind, context)}" CASCADE`)
  } finally {
    await client.end()
  }
}

const runHttp = async (
  config: BenchConfig,
  cases: ReadonlyArray<LoadCase>
): Promise<{ readonly runs: ReadonlyArray<HttpRun>; readonly statements: ReadonlyArray<StatementCount> }> => {
  if (cases.length === 0) return { runs: [], statements: [] }
  const workDir = mkdtempSync(join(tmpdir(), "accord-bench-"))
  const context: ServerContext = {
    users: config.users,
    workDir,
    execArgv: config.cpuProfileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${config.cpuProfileDir}`],
    databaseUrl: config.databaseUrl,
    runId: randomBytes(4).toString("hex")
  }
  const allKinds = ordered(cases.flatMap((entry) => entry.kinds))
  writeSeedFile(context)
  const servers = new Map<BenchServerKind, BenchServer>()
  let failed = false
  try {
    for (const kind of allKinds) {
      servers.set(kind, await startBenchServer(kind, context))
    }
    await checkEquivalent(servers, config.scenarios)
    const statements = await countStatements(allKinds, context)
    const [first] = cases
    if (config.initialWarmupSeconds > 0 && first !== undefined) {
      console.log(`warming up: ${config.initialWarmupSeconds} s per server and scenario`)
      for (const scenario of config.scenarios) {
        for (const server of servers.values()) {
          await runLoad(server.url, scenario, config.initialWarmupSeconds, first.connections)
          server.log?.clearLog()
        }
      }
    }
    const runs: Array<HttpRun> = []
    let round = 0
    for (const mode of config.modes) {
      const busyLoop = mode === "busy" ? await startBusyLoop() : undefined
      try {
        for (let modeRound = 1; modeRound <= config.rounds; modeRound++) {
          round++
          for (const { scenario, connections, kinds } of cases) {
            // Every server in every round, in one order in odd rounds and the reverse in even ones, so a drift in
            // machine load favours none of them (each server stays next to its baseline, so their pairing holds).
            for (const kind of round % 2 === 1 ? kinds : [...kinds].reverse()) {
              const server = servers.get(kind)
              if (server === undefined) throw new Error(`${kind} is not running`)
              if (config.warmupSeconds > 0) await runLoad(server.url, scenario, config.warmupSeconds, connections)
              server.log?.markLog()
              const cpuBefore = cpuSecondsOf(server.pid)
              const result = await runLoad(server.url, scenario, config.durationSeconds, connections)
              const cpuAfter = cpuSecondsOf(server.pid)
              const log = server.log?.logSinceMark()
              if (result.failures > 0) throw new Error(`${kind} ${scenario.name}: ${result.failures} failed requests`)
              const cpuMicrosPerRequest =
                cpuBefore === undefined || cpuAfter === undefined
                  ? Number.NaN
                  : ((cpuAfter - cpuBefore) * 1e6) / result.requests
              runs.push({
                mode,
                round: modeRound,
                scenario: scenario.name,
                connections,
                kind,
                requestsPerSecond: result.requestsPerSecond,
                p50Ms: result.p50Ms,
                p99Ms: result.p99Ms,
                maxMs: result.maxMs,
                cpuMicrosPerRequest,
                logBytesPerRequest: log === undefined ? undefined : log.bytes / result.requests,
                logLinesPerRequest: log === undefined ? undefined : log.lines / result.requests
              })
              console.log(
                `${mode} round ${modeRound} ${scenario.name.padEnd(18)} ${String(connections).padStart(3)} conn ${kind.padEnd(16)} ` +
                  `${result.requestsPerSecond.toFixed(0).padStart(7)} req/s  p50 ${result.p50Ms.toFixed(2)} ms  ` +
                  `p99 ${result.p99Ms.toFixed(2)} ms  max ${result.maxMs.toFixed(0)} ms  CPU ${cpuMicrosPerRequest.toFixed(1)} µs/req` +
                  (log === undefined ? "" : `  log ${(log.lines / result.requests).toFixed(2)} lines/req`) +
                  `  (load ${load1().toFixed(2)})`
              )
            }
          }
        }
      } finally {
        await busyLoop?.stop()
      }
    }
    return { runs, statements }
  } catch (error) {
    failed = true
    throw error
  } finally {
    await Promise.all([...servers.values()].map((server) => server.stop()))
    await dropSchemas(allKinds, context).catch((error: unknown) => console.error("dropping the bench schemas:", error))
    // A failed run keeps the CLI servers' logs for a look.
    if (failed) console.error(`the servers' seed and logs are kept in ${workDir}`)
    else rmSync(workDir, { recursive: true, force: true })
  }
}

const runMicro = async (): Promise<ReadonlyArray<MicroResult>> => {
  const child = forkChild("micro.js", [])
  try {
    return (await messageOf(child, "micro")).results
  } finally {
    await stopChild(child)
  }
}

/** The stage table (stages.ts); its CLI rows' access log goes to a file of their own, as the CLI's does. */
const runStages = async (config: BenchConfig): Promise<StagesResult> => {
  const logDir = mkdtempSync(join(tmpdir(), "accord-stages-log-"))
  const log = openSync(join(logDir, "stderr.log"), "a")
  const child = fork(join(here, "stages.js"), [], {
    stdio: ["ignore", "inherit", log, "ipc"],
    // Five rounds in a full run, one with --quick, unless BENCH_STAGE_ROUNDS says otherwise.
    env: { BENCH_STAGE_ROUNDS: String(config.rounds * 2 - 1), ...process.env }
  })
  closeSync(log)
  try {
    const { results, requestsPerRun, rounds, connections } = await messageOf(child, "stages")
    return { results, requestsPerRun, rounds, connections }
  } catch (error) {
    console.error(`the stage table's stderr is in ${logDir}`)
    throw error
  } finally {
    await stopChild(child)
  }
}

const runEvents = async (): Promise<EventsResult> => {
  const child = forkChild("events.js", [])
  try {
    return (await messageOf(child, "events")).result
  } finally {
    await stopChild(child)
  }
}

const runStreams = async (): Promise<StreamsResult> => {
  const child = forkChild("streams.js", [])
  try {
    return (await messageOf(child, "streams")).result
  } finally {
    await stopChild(child)
  }
}

const runMemory = async (): Promise<MemoryResult> => {
  const child = forkChild("memory.js", [], ["--expose-gc"])
  try {
    return (await messageOf(child, "memory")).result
  } finally {
    await stopChild(child)
  }
}

const cpuModel = (): string => {
  try {
    const line = readFileSync("/proc/cpuinfo", "utf8")
      .split("\n")
      .find((text) => text.startsWith("model name"))
    return line?.split(":")[1]?.trim() ?? "unknown"
  } catch {
    return "unknown"
  }
}

const describeCalibration = (when: string, calibration: Calibration): string =>
  `${when}: loopback round trip ${calibration.roundTripMicros.toFixed(1)} µs as found, ` +
  `${calibration.roundTripMicrosBusyLoop.toFixed(1)} µs with the busy-loop (behaves as ${behavedAs(calibration)}); ` +
  `counting loop ${calibration.loopNanos.toFixed(2)} ns/iteration`

const main = async (): Promise<void> => {
  const parsed = parseBenchConfig(process.argv.slice(2), process.env)
  if (parsed.help) {
    process.stdout.write(usage)
    return
  }
  const config = parsed.config
  // micro.ts and memory.ts read their sizes from the environment.
  process.env["BENCH_USERS"] = String(config.users)
  process.env["BENCH_MEMORY_USERS"] = String(config.memoryUsers)
  // events.ts too; without a database URL it measures no PostgreSQL row.
  process.env["BENCH_EVENT_WRITES"] = String(config.eventWrites)
  process.env["BENCH_RELAY_EVENTS"] = String(config.relayEvents)
  process.env["BENCH_STREAMS"] = String(config.streams)
  if (config.databaseUrl === undefined) delete process.env["BENCH_DATABASE_URL"]
  else process.env["BENCH_DATABASE_URL"] = config.databaseUrl
  const cases = loadCases(config)
  // The CLI servers run on this Node: `npm run bench` puts the project's pinned one first on the PATH.
  const pinned = (JSON.parse(readFileSync(join(here, "..", "..", "package.json"), "utf8")) as PinnedNode)
    .devDependencies?.node
  if (pinned !== undefined && pinned !== process.versions.node)
    console.warn(`warning: Node ${process.versions.node}, not the project's ${pinned}: run it with \`npm run bench\``)
  const resultsPath =
    config.resultsPath ?? join(here, "..", isCompleteRun(config) ? "RESULTS.md" : "RESULTS.partial.md")
  console.log(
    `bench: ${[...config.sections].join(", ")}; machine mode ${config.modes.join(" then ")}; ${config.rounds} rounds of ` +
      `${config.warmupSeconds} + ${config.durationSeconds} s; connections ${config.connections.join(", ")}; ` +
      `Node ${process.version} (${process.execPath}); about ${Math.ceil(estimateSeconds(config, cases) / 60)} min`
  )
  if (config.plan) {
    for (const { scenario, connections, kinds } of cases)
      console.log(`${scenario.name}, ${connections} connections: ${kinds.join(", ")}`)
    console.log(
      `then ${[...config.sections].filter((section) => section === "stages" || section === "micro" || section === "memory" || section === "events" || section === "streams").join(", ") || "nothing else"}; results to ${resultsPath}`
    )
    if (config.sections.has("events"))
      console.log(
        `events: set-default with its event and without, ${config.eventWrites * 10} writes each on store-memory, ` +
          `${config.eventWrites} on PGlite` +
          (config.databaseUrl === undefined ? " (no --database-url: no PostgreSQL row)" : ` and on PostgreSQL`) +
          `; one relay delivering ${config.relayEvents} signed webhooks to a local receiver`
      )
    if (config.sections.has("streams"))
      console.log(
        `streams: ${config.streams} event streams open on one server, one user's change 20 times, then a change per user`
      )
    return
  }
  await waitForQuietMachine(config)
  const loadBefore = loadavg()
  const started = new Date()
  const calibrations: Array<{ when: string; calibration: Calibration }> = []
  const calibrateNow = async (when: string) => {
    const calibration = await calibrate()
    calibrations.push({ when, calibration })
    console.log(describeCalibration(when, calibration))
  }
  if (cases.length > 0) await calibrateNow("before")
  const { runs: http, statements } = await runHttp(config, cases)
  if (cases.length > 0) await calibrateNow("after")
  const stages = config.sections.has("stages") ? await runStages(config) : undefined
  const micro = config.sections.has("micro") ? await runMicro() : []
  const memory = config.sections.has("memory") ? await runMemory() : undefined
  const events = config.sections.has("events") ? await runEvents() : undefined
  const streams = config.sections.has("streams") ? await runStreams() : undefined
  const report = renderReport({
    machine: {
      cpu: cpuModel(),
      cores: availableParallelism(),
      memoryBytes: totalmem(),
      node: process.version,
      kernel: release(),
      loadBefore,
      loadAfter: loadavg()
    },
    calibrations,
    started,
    seconds: (Date.now() - started.getTime()) / 1000,
    config,
    http,
    statements,
    stages,
    micro,
    memory,
    events,
    streams,
    remainingCosts: readFileSync(join(here, "..", "remaining-costs.md"), "utf8")
  })
  console.log("\n" + report.console)
  writeFileSync(resultsPath, report.markdown)
  console.log(`\nwrote ${resultsPath}`)
}

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
