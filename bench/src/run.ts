import type { ChildProcess } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { availableParallelism, loadavg, release, totalmem } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { benchHeaders, scenarios, type Scenario } from "./fixtures.js"
import { cpuSecondsOf, forkChild, messageOf, runLoad, stopChild } from "./processes.js"
import {
  ADAPTER_KINDS,
  BARE_OF,
  PEER_KINDS,
  SERVER_KINDS,
  type MemoryResult,
  type MicroResult,
  type ServerKind
} from "./protocol.js"
import { renderReport, type HttpRun } from "./report.js"

/**
 * `npm run bench`: the adapters on store-memory against bare-framework baselines and two peer libraries (ts-rest on
 * Fastify, effect's HttpApi), each server in its own process, autocannon here; then micro benchmarks and store memory
 * in fresh child processes; prints the tables and writes bench/RESULTS.md. Durations and sizes come from the
 * environment (see README.md).
 */

const here = dirname(fileURLToPath(import.meta.url))
const numberFrom = (name: string, fallback: number): number => {
  const value = Number(process.env[name] ?? fallback)
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number`)
  return value
}

const sections = new Set((process.env["BENCH_ONLY"] ?? "http,micro,memory").split(",").map((part) => part.trim()))
const config = {
  durationSeconds: numberFrom("BENCH_DURATION", 3),
  warmupSeconds: numberFrom("BENCH_WARMUP", 1),
  /** Once per server and scenario before the rounds: a fresh process spends its first seconds compiling. */
  initialWarmupSeconds: numberFrom("BENCH_INITIAL_WARMUP", 4),
  rounds: Math.max(1, numberFrom("BENCH_ROUNDS", 5)),
  connections: Math.max(1, numberFrom("BENCH_CONNECTIONS", 10)),
  users: Math.max(1, numberFrom("BENCH_USERS", 1000)),
  memoryUsers: Math.max(1, numberFrom("BENCH_MEMORY_USERS", 100_000)),
  /** With BENCH_MAX_LOAD, wait (up to 10 minutes) for the 1-minute load average to fall below it first. */
  maxLoad: process.env["BENCH_MAX_LOAD"] === undefined ? undefined : numberFrom("BENCH_MAX_LOAD", 0),
  /** With BENCH_CPU_PROF_DIR, servers run with --cpu-prof and write their profiles there on exit. */
  cpuProfileDir: process.env["BENCH_CPU_PROF_DIR"]
}
const complete = ["http", "micro", "memory"].every((section) => sections.has(section))
const resultsPath = process.env["BENCH_RESULTS"] ?? join(here, "..", complete ? "RESULTS.md" : "RESULTS.partial.md")

const load1 = (): number => loadavg()[0] ?? 0
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const waitForQuietMachine = async (): Promise<void> => {
  if (config.maxLoad === undefined) return
  const deadline = Date.now() + 10 * 60_000
  while (load1() >= config.maxLoad && Date.now() < deadline) {
    console.log(`load average ${load1().toFixed(2)} >= ${config.maxLoad}; waiting`)
    await sleep(15_000)
  }
}

/** The baseline must answer what the adapter answers, or the comparison means nothing. */
const IGNORED_HEADERS = new Set(["date", "connection", "keep-alive", "x-request-id"])
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
 * Each adapter against its bare baseline: status, headers and body keys. Each peer against bare Fastify: status 200
 * and the same body keys. The peers' headers are compared too, since today they match: ts-rest sends bare Fastify's
 * headers; effect's HttpApi sends the same set (its schemas carry bare-domain's content types, a router middleware
 * adds the other three), in another order (not compared) and with Node's `keep-alive: timeout=5` instead of
 * Fastify's 72 (keep-alive is among IGNORED_HEADERS). Where a peer cannot match bare, it is on paths the benchmark
 * does not send (README.md, "The peers").
 */
const checkEquivalent = async (urls: ReadonlyMap<ServerKind, string>): Promise<void> => {
  const pairs: ReadonlyArray<readonly [ServerKind, ServerKind]> = [
    ...ADAPTER_KINDS.map((adapter) => [adapter, BARE_OF[adapter]] as const),
    ...PEER_KINDS.map((peer) => [peer, "fastify-bare"] as const)
  ]
  for (const scenario of scenarios) {
    for (const [kind, bare] of pairs) {
      const [a, b] = await Promise.all([probe(urls.get(kind) ?? "", scenario), probe(urls.get(bare) ?? "", scenario)])
      if (a.status !== 200 || JSON.stringify(a) !== JSON.stringify(b)) {
        throw new Error(
          `${scenario.name}: ${kind} and ${bare} answer differently:\n${JSON.stringify(a)}\n${JSON.stringify(b)}`
        )
      }
    }
  }
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? Number.NaN)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

const runHttp = async (): Promise<ReadonlyArray<HttpRun>> => {
  const kinds: ReadonlyArray<ServerKind> = SERVER_KINDS
  const profile = config.cpuProfileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${config.cpuProfileDir}`]
  const children = new Map<ServerKind, ChildProcess>()
  const urls = new Map<ServerKind, string>()
  try {
    for (const kind of kinds) {
      const child = forkChild("server.js", [kind, String(config.users)], profile)
      children.set(kind, child)
      urls.set(kind, (await messageOf(child, "ready")).url)
    }
    await checkEquivalent(urls)
    if (config.initialWarmupSeconds > 0) {
      for (const scenario of scenarios) {
        for (const kind of kinds)
          await runLoad(urls.get(kind) ?? "", scenario, config.initialWarmupSeconds, config.connections)
      }
    }
    const runs: Array<HttpRun> = []
    for (let round = 1; round <= config.rounds; round++) {
      for (const scenario of scenarios) {
        // Every server in every round, in one order in odd rounds and the reverse in even ones, so a drift in machine
        // load favours none of them (each adapter stays next to its baseline, so their pairing is unchanged).
        for (const kind of round % 2 === 1 ? kinds : [...kinds].reverse()) {
          const url = urls.get(kind) ?? ""
          const pid = children.get(kind)?.pid
          if (config.warmupSeconds > 0) await runLoad(url, scenario, config.warmupSeconds, config.connections)
          const cpuBefore = cpuSecondsOf(pid)
          const result = await runLoad(url, scenario, config.durationSeconds, config.connections)
          const cpuAfter = cpuSecondsOf(pid)
          if (result.failures > 0) throw new Error(`${kind} ${scenario.name}: ${result.failures} failed requests`)
          const cpuMicrosPerRequest =
            cpuBefore === undefined || cpuAfter === undefined
              ? Number.NaN
              : ((cpuAfter - cpuBefore) * 1e6) / result.requests
          runs.push({ round, scenario: scenario.name, kind, ...result, cpuMicrosPerRequest })
          console.log(
            `round ${round} ${scenario.name.padEnd(18)} ${kind.padEnd(14)} ${result.requestsPerSecond.toFixed(0).padStart(7)} req/s  ` +
              `p50 ${result.p50Ms.toFixed(2)} ms  p99 ${result.p99Ms.toFixed(2)} ms  server CPU ${cpuMicrosPerRequest.toFixed(1)} us/req  (load ${load1().toFixed(2)})`
          )
        }
      }
    }
    return runs
  } finally {
    await Promise.all([...children.values()].map(stopChild))
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

const main = async (): Promise<void> => {
  process.env["BENCH_USERS"] = String(config.users)
  process.env["BENCH_MEMORY_USERS"] = String(config.memoryUsers)
  await waitForQuietMachine()
  const loadBefore = loadavg()
  const started = new Date()
  const http = sections.has("http") ? await runHttp() : []
  const micro = sections.has("micro") ? await runMicro() : []
  const memory = sections.has("memory") ? await runMemory() : undefined
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
    started,
    seconds: (Date.now() - started.getTime()) / 1000,
    config,
    http,
    micro,
    memory,
    median,
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
