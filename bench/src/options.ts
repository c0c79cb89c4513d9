import { parseArgs } from "node:util"
import { scenarios as allScenarios, type Scenario } from "./fixtures.js"
import type { MachineMode } from "./machine.js"
import { CLI_ADAPTERS, type CliAdapter } from "./protocol.js"

/**
 * `npm run bench -- [options]`: every option also has an environment variable (in brackets in `usage`); a flag wins
 * over the environment. bench/README.md, "Settings", describes them.
 */

export const SECTIONS = ["cli", "http", "stages", "micro", "memory", "events", "streams"] as const
export type Section = (typeof SECTIONS)[number]

export interface BenchConfig {
  readonly sections: ReadonlySet<Section>
  readonly durationSeconds: number
  readonly warmupSeconds: number
  /** Once per server and scenario before the rounds: a fresh process spends its first seconds compiling. */
  readonly initialWarmupSeconds: number
  readonly rounds: number
  /** autocannon connections: the first for every server and scenario, the others for the CLI comparison only. */
  readonly connections: ReadonlyArray<number>
  /** The CLI adapters measured (and, with them, their bare frameworks). */
  readonly adapters: ReadonlyArray<CliAdapter>
  readonly scenarios: ReadonlyArray<Scenario>
  /** Scenarios measured at the connection counts after the first. */
  readonly wideScenarios: ReadonlyArray<Scenario>
  /** Runs of the HTTP sections: as the machine is (`idle`: no busy-loop of the bench's), with the busy-loop, or both. */
  readonly modes: ReadonlyArray<MachineMode>
  readonly users: number
  readonly memoryUsers: number
  /** With it, wait (up to 10 minutes) for the 1-minute load average to fall below it first. */
  readonly maxLoad: number | undefined
  /** With it, servers run with --cpu-prof and write their profiles there on exit. */
  readonly cpuProfileDir: string | undefined
  /** Where the report goes; undefined: RESULTS.md for a complete run, RESULTS.partial.md otherwise. */
  readonly resultsPath: string | undefined
  /** Print what would be measured and how long it would take, measure nothing. */
  readonly plan: boolean
  /** Issue 31's section (events.ts): set-defaults with their event and as many without, per SQL store. */
  readonly eventWrites: number
  /** Events one relay delivers in the events section. */
  readonly relayEvents: number
  /** Issue 39's section (streams.ts): event streams open at once on one server process. */
  readonly streams: number
  /** The PostgreSQL server of the SQL rows (the CLI on `--store postgres` and its bare baseline); none: not run. */
  readonly databaseUrl: string | undefined
}

export const usage = `Usage: npm run bench -- [options]

  --only LIST            sections: cli, http, stages, micro, memory, events, streams (BENCH_ONLY, default all); a partial run
                         writes RESULTS.partial.md
  --duration S           seconds per measured run (BENCH_DURATION, default 3)
  --warmup S             unmeasured seconds before each run (BENCH_WARMUP, default 1)
  --initial-warmup S     unmeasured seconds per server and scenario before the first round (BENCH_INITIAL_WARMUP, 4)
  --rounds N             alternating rounds (BENCH_ROUNDS, default 3)
  --connections LIST     autocannon connections (BENCH_CONNECTIONS, default 10,50): the first for every server, the
                         others for the CLI servers, their bare frameworks and ts-rest
  --adapters LIST        CLI adapters: fastify, koa, express, fetch (BENCH_ADAPTERS, default all)
  --scenarios LIST       language (one user's record: a hot record), language-spread (the same writes over 500
                         users), payment-method (BENCH_SCENARIOS, default all)
  --wide-scenarios LIST  scenarios at the connection counts after the first (BENCH_WIDE_SCENARIOS, default
                         language,language-spread)
  --machine-mode MODE    idle: the machine as it is; busy: a busy-loop on every core; both: the HTTP rounds once
                         each way (BENCH_MACHINE_MODE, default idle)
  --users N              users seeded into each server (BENCH_USERS, default 1000)
  --memory-users N       users for the memory measurement (BENCH_MEMORY_USERS, default 100000)
  --max-load N           first wait (up to 10 min) for the 1-minute load average to fall below N (BENCH_MAX_LOAD)
  --event-writes N       events section: writes with an event and as many without, per SQL store; ten times
                         that on the memory store (BENCH_EVENT_WRITES, default 4000; 1000 with --quick)
  --relay-events N       events section: events one relay delivers as webhooks (BENCH_RELAY_EVENTS, default 5000)
  --streams N            streams section: event streams open at once on one server (BENCH_STREAMS, default 1000)
  --cpu-prof-dir DIR     run the servers with --cpu-prof, profiles in DIR (BENCH_CPU_PROF_DIR)
  --results FILE         write the report there (BENCH_RESULTS)
  --database-url URL     PostgreSQL for the CLI on --store postgres, bare Fastify + pg and the events section's
                         PostgreSQL row (BENCH_DATABASE_URL); each works in a schema of the run's own, dropped at the
                         end; without it those rows are not run
  --quick                a first look: 1 round, 2 s initial warm-up, PUT language only, 1000 event writes (each
                         can still be set)
  --plan                 print the servers, loads and expected duration, and stop
  --help
`

const OPTIONS = {
  only: "BENCH_ONLY",
  duration: "BENCH_DURATION",
  warmup: "BENCH_WARMUP",
  "initial-warmup": "BENCH_INITIAL_WARMUP",
  rounds: "BENCH_ROUNDS",
  connections: "BENCH_CONNECTIONS",
  adapters: "BENCH_ADAPTERS",
  scenarios: "BENCH_SCENARIOS",
  "wide-scenarios": "BENCH_WIDE_SCENARIOS",
  "machine-mode": "BENCH_MACHINE_MODE",
  users: "BENCH_USERS",
  "memory-users": "BENCH_MEMORY_USERS",
  "max-load": "BENCH_MAX_LOAD",
  "event-writes": "BENCH_EVENT_WRITES",
  "relay-events": "BENCH_RELAY_EVENTS",
  streams: "BENCH_STREAMS",
  "cpu-prof-dir": "BENCH_CPU_PROF_DIR",
  results: "BENCH_RESULTS",
  "database-url": "BENCH_DATABASE_URL"
} as const
type OptionName = keyof typeof OPTIONS

const listOf = (text: string): ReadonlyArray<string> =>
  text
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "")

const oneOf = <A extends string>(name: string, allowed: ReadonlyArray<A>, values: ReadonlyArray<string>): Array<A> =>
  values.map((value) => {
    const found = allowed.find((candidate) => candidate === value)
    if (found === undefined) throw new Error(`--${name}: ${value} is not one of ${allowed.join(", ")}`)
    return found
  })

/** `--help`, or the configuration from argv and the environment. */
export const parseBenchConfig = (
  argv: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv
): { readonly help: true } | { readonly help: false; readonly config: BenchConfig } => {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      help: { type: "boolean" },
      plan: { type: "boolean" },
      quick: { type: "boolean" },
      ...Object.fromEntries(Object.keys(OPTIONS).map((name) => [name, { type: "string" as const }]))
    },
    strict: true,
    allowPositionals: false
  })
  if (values.help === true) return { help: true }
  // parseArgs types only what it can see; every option but the three switches is a string.
  const given = values as Readonly<Record<string, string | boolean | undefined>>
  // --quick changes defaults only: a flag or variable that sets the same thing still wins.
  const quick = values.quick === true
  const text = (name: OptionName): string | undefined => {
    const value = given[name] ?? env[OPTIONS[name]]
    return typeof value === "string" && value !== "" ? value : undefined
  }
  const number = (name: OptionName, fallback: number, minimum = 0): number => {
    const value = Number(text(name) ?? fallback)
    if (!Number.isFinite(value) || value < minimum) throw new Error(`--${name} must be a number >= ${minimum}`)
    return value
  }
  const scenariosOf = (name: OptionName, fallback: string) =>
    oneOf(
      name,
      allScenarios.map((scenario) => scenario.id),
      listOf(text(name) ?? fallback)
    ).map((id) => allScenarios.find((scenario) => scenario.id === id) as Scenario)
  const mode = oneOf("machine-mode", ["idle", "busy", "both"] as const, [text("machine-mode") ?? "idle"])[0]
  const connections = listOf(text("connections") ?? "10,50").map((value) => {
    const count = Number(value)
    if (!Number.isInteger(count) || count < 1) throw new Error("--connections takes whole numbers >= 1")
    return count
  })
  const maxLoad = text("max-load")
  return {
    help: false,
    config: {
      sections: new Set(oneOf("only", SECTIONS, listOf(text("only") ?? SECTIONS.join(",")))),
      durationSeconds: number("duration", 3, 1),
      warmupSeconds: number("warmup", 1),
      initialWarmupSeconds: number("initial-warmup", quick ? 2 : 4),
      rounds: Math.round(number("rounds", quick ? 1 : 3, 1)),
      connections: connections.length === 0 ? [10] : connections,
      adapters: oneOf("adapters", CLI_ADAPTERS, listOf(text("adapters") ?? CLI_ADAPTERS.join(","))),
      scenarios: scenariosOf(
        "scenarios",
        quick ? "language,language-spread" : allScenarios.map((scenario) => scenario.id).join(",")
      ),
      wideScenarios: scenariosOf("wide-scenarios", "language,language-spread"),
      modes: mode === "both" ? ["idle", "busy"] : [mode ?? "idle"],
      users: Math.round(number("users", 1000, 1)),
      memoryUsers: Math.round(number("memory-users", 100_000, 1)),
      eventWrites: Math.round(number("event-writes", quick ? 1000 : 4000, 100)),
      relayEvents: Math.round(number("relay-events", 5000, 1)),
      streams: Math.round(number("streams", 1000, 1)),
      maxLoad: maxLoad === undefined ? undefined : number("max-load", 0),
      cpuProfileDir: text("cpu-prof-dir"),
      resultsPath: text("results"),
      plan: values.plan === true,
      databaseUrl: text("database-url")
    }
  }
}

/** Everything measured, so the report may replace RESULTS.md (any subset writes RESULTS.partial.md). */
export const isCompleteRun = (config: BenchConfig): boolean =>
  SECTIONS.every((section) => config.sections.has(section)) &&
  config.adapters.length === CLI_ADAPTERS.length &&
  config.scenarios.length === allScenarios.length
