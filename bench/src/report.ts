import { behavedAs, IDLE_SLOWDOWN, type Calibration, type MachineMode } from "./machine.js"
import {
  ADAPTER_KINDS,
  BARE_OF,
  CLI_ADAPTERS,
  CLI_BARE_OF,
  CLI_PGLITE,
  CLI_PGLITE_AGAINST,
  CLI_POSTGRES,
  cliKind,
  PEER_KINDS,
  SQL_BARE_OF,
  type AdapterKind,
  type BenchServerKind,
  type CliAdapter,
  type EventsResult,
  type MemoryResult,
  type MicroResult,
  type StagesResult,
  type StreamsResult
} from "./protocol.js"

/** Turns the measurements into the tables printed at the end and written to bench/RESULTS.md. */

export interface HttpRun {
  readonly mode: MachineMode
  readonly round: number
  readonly scenario: string
  readonly connections: number
  readonly kind: BenchServerKind
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** The slowest request of the run. */
  readonly maxMs: number
  /** CPU time (user + system) the server process used per request during the run. */
  readonly cpuMicrosPerRequest: number
  /** What the access log wrote per request (the CLI servers only). */
  readonly logBytesPerRequest: number | undefined
  readonly logLinesPerRequest: number | undefined
}

/** Statements and round trips per PUT language of a server on PostgreSQL, counted outside the measured runs. */
export interface StatementCount {
  readonly kind: BenchServerKind
  readonly statementsPerRequest: number
  readonly roundTripsPerRequest: number
}

export interface ReportInput {
  readonly machine: {
    readonly cpu: string
    readonly cores: number
    readonly memoryBytes: number
    readonly node: string
    readonly kernel: string
    readonly loadBefore: ReadonlyArray<number>
    readonly loadAfter: ReadonlyArray<number>
  }
  readonly calibrations: ReadonlyArray<{ readonly when: string; readonly calibration: Calibration }>
  readonly started: Date
  readonly seconds: number
  readonly config: {
    readonly durationSeconds: number
    readonly warmupSeconds: number
    readonly initialWarmupSeconds: number
    readonly rounds: number
    readonly connections: ReadonlyArray<number>
    readonly modes: ReadonlyArray<MachineMode>
    readonly users: number
  }
  readonly http: ReadonlyArray<HttpRun>
  readonly statements?: ReadonlyArray<StatementCount>
  /** The stage table (stages.ts); undefined when not run. */
  readonly stages?: StagesResult | undefined
  readonly micro: ReadonlyArray<MicroResult>
  readonly memory: MemoryResult | undefined
  /** Issue 31's section (events.ts); undefined when not run. */
  readonly events?: EventsResult | undefined
  /** Issue 39's section (streams.ts); undefined when not run. */
  readonly streams?: StreamsResult | undefined
  readonly remainingCosts: string
}

/** Targets of the benchmark issue (5) for the adapters without the CLI: req/s at least this share of bare, p99 at most 1.3x. */
export const TARGETS = { fastify: 0.8, koa: 0.9, p99: 1.3 } as const

/**
 * Acceptance of issue 19, for the CLI server at its default log level: at least this share of its bare framework
 * (the fetch adapter: of Hono on @hono/node-server), Fastify also of ts-rest, and p99 at most 1.3 times the bare
 * framework's.
 */
export const CLI_TARGETS = {
  bare: { fastify: 0.8, koa: 0.85, express: 0.85, fetch: 0.85 },
  tsRest: 0.95,
  p99: 1.3
} as const satisfies { readonly bare: Record<CliAdapter, number>; readonly tsRest: number; readonly p99: number }

export const median = (values: ReadonlyArray<number>): number => {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length === 0
    ? Number.NaN
    : sorted.length % 2 === 1
      ? (sorted[middle] ?? Number.NaN)
      : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2
}

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [header, header.map(() => "---"), ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n")

const fixed = (value: number | undefined, digits: number): string =>
  value !== undefined && Number.isFinite(value) ? value.toFixed(digits) : "n/a"
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
const thousands = (value: number): string =>
  Number.isFinite(value) ? Math.round(value).toLocaleString("en-US") : "n/a"
const load = (values: ReadonlyArray<number>): string => values.map((value) => value.toFixed(2)).join(" / ")

const ADAPTER_NAMES: Readonly<Record<CliAdapter, string>> = {
  fastify: "Fastify",
  koa: "Koa",
  express: "Express",
  fetch: "fetch"
}

/** How the tables name the servers. */
const LABELS: Readonly<Record<BenchServerKind, string>> = {
  "fastify-accord": "Fastify adapter",
  "fastify-bare": "bare Fastify",
  "koa-accord": "Koa adapter",
  "koa-bare": "bare Koa",
  "express-bare": "bare Express 5",
  "hono-bare": "Hono on @hono/node-server",
  "fastify-tsrest": "ts-rest",
  "effect-httpapi": "Effect HttpApi",
  ...(Object.fromEntries(
    CLI_ADAPTERS.flatMap((adapter) => [
      [cliKind(adapter, "default"), `${ADAPTER_NAMES[adapter]} CLI`],
      [cliKind(adapter, "warn"), `${ADAPTER_NAMES[adapter]} CLI, log warn`]
    ])
  ) as Record<`cli-${CliAdapter}` | `cli-${CliAdapter}-warn`, string>),
  [CLI_PGLITE]: "Fastify CLI on PGlite, log warn",
  [CLI_POSTGRES]: "Fastify CLI on PostgreSQL",
  "fastify-bare-pg": "bare Fastify + pg",
  "fastify-bare-pglite": "bare Fastify + PGlite"
}

const FRAMEWORK_OF: Readonly<Record<AdapterKind, "fastify" | "koa">> = {
  "fastify-accord": "fastify",
  "koa-accord": "koa"
}

/** 0.61 -> "0.61 of bare Fastify", 2.5 -> "2.50x Effect HttpApi". */
const share = (ratio: number, other: string): string =>
  !Number.isFinite(ratio)
    ? `n/a against ${other}`
    : ratio < 1
      ? `${ratio.toFixed(2)} of ${other}`
      : `${ratio.toFixed(2)}x ${other}`

const MODE_TITLES: Readonly<Record<MachineMode, string>> = {
  idle: "idle: no busy-loop, the machine as found",
  busy: "busy: the bench's busy-loop on every core"
}

/** The runs of one machine mode, connection count and scenario: the servers measured side by side. */
interface Group {
  readonly mode: MachineMode
  readonly connections: number
  readonly scenario: string
  readonly runs: ReadonlyArray<HttpRun>
}

const groupsOf = (runs: ReadonlyArray<HttpRun>): ReadonlyArray<Group> => {
  const groups = new Map<string, Group & { runs: Array<HttpRun> }>()
  for (const run of runs) {
    const key = `${run.mode}/${run.connections}/${run.scenario}`
    const group = groups.get(key) ?? { mode: run.mode, connections: run.connections, scenario: run.scenario, runs: [] }
    group.runs.push(run)
    groups.set(key, group)
  }
  return [...groups.values()]
}

const runsOf = (group: Group, kind: BenchServerKind) => group.runs.filter((run) => run.kind === kind)

const summaryOf = (group: Group, kind: BenchServerKind) => {
  const runs = runsOf(group, kind)
  if (runs.length === 0) return undefined
  const logged = runs.flatMap((run) => (run.logBytesPerRequest === undefined ? [] : [run]))
  return {
    requestsPerSecond: median(runs.map((run) => run.requestsPerSecond)),
    p50Ms: median(runs.map((run) => run.p50Ms)),
    p99Ms: median(runs.map((run) => run.p99Ms)),
    maxMs: Math.max(...runs.map((run) => run.maxMs)),
    cpuMicrosPerRequest: median(runs.map((run) => run.cpuMicrosPerRequest)),
    logBytesPerRequest: logged.length === 0 ? undefined : median(logged.map((run) => run.logBytesPerRequest ?? 0)),
    logLinesPerRequest: logged.length === 0 ? undefined : median(logged.map((run) => run.logLinesPerRequest ?? 0)),
    perRound: runs.map((run) => run.requestsPerSecond)
  }
}

/** A server against another in one group; undefined when either was not measured. */
const compare = (group: Group, kind: BenchServerKind, other: BenchServerKind) => {
  const ours = runsOf(group, kind)
  const theirs = runsOf(group, other)
  if (ours.length === 0 || theirs.length === 0) return undefined
  return {
    throughput: median(ours.map((run) => run.requestsPerSecond)) / median(theirs.map((run) => run.requestsPerSecond)),
    paired: median(
      ours.map(
        (run) =>
          run.requestsPerSecond / (theirs.find((them) => them.round === run.round)?.requestsPerSecond ?? Number.NaN)
      )
    ),
    /** Their CPU per request over ours: the throughput ratio with a core each to themselves. */
    cpu: median(theirs.map((run) => run.cpuMicrosPerRequest)) / median(ours.map((run) => run.cpuMicrosPerRequest)),
    p99: median(ours.map((run) => run.p99Ms)) / median(theirs.map((run) => run.p99Ms))
  }
}

const modesOf = (input: ReportInput): ReadonlyArray<MachineMode> =>
  input.config.modes.filter((mode) => input.http.some((run) => run.mode === mode))

/** A heading per machine mode when the run had two. */
const perMode = (input: ReportInput, render: (mode: MachineMode) => ReadonlyArray<string>): ReadonlyArray<string> => {
  const modes = modesOf(input)
  return modes.flatMap((mode) => {
    const body = render(mode)
    if (body.length === 0) return []
    return modes.length > 1 ? [`### ${MODE_TITLES[mode]}`, "", ...body, ""] : [...body, ""]
  })
}

/** One table per machine mode of the run, with the rows that mode has (none: no table). */
const tablePerMode = (
  input: ReportInput,
  header: ReadonlyArray<string>,
  rowsOf: (mode: MachineMode) => ReadonlyArray<ReadonlyArray<string>>
): ReadonlyArray<string> =>
  perMode(input, (mode) => {
    const rows = rowsOf(mode)
    return rows.length === 0 ? [] : [table(header, rows)]
  })

const groupLabel = (group: Group): string => `${group.connections} connections, ${group.scenario}`

// ---------------------------------------------------------------------------------------------------------------

const machineSection = (input: ReportInput): string => {
  const { machine } = input
  return [
    table(
      ["CPU", "cores", "memory", "Node", "kernel", "load 1/5/15 min before", "after"],
      [
        [
          machine.cpu,
          String(machine.cores),
          mib(machine.memoryBytes),
          machine.node,
          machine.kernel,
          load(machine.loadBefore),
          load(machine.loadAfter)
        ]
      ]
    ),
    ...(input.calibrations.length === 0 ? [] : modeParagraph(input))
  ].join("\n")
}

/** Which mode the HTTP rounds ran in, and how the machine behaved by the calibrations. */
const modeParagraph = (input: ReportInput): ReadonlyArray<string> => {
  const behaved = input.calibrations.map(({ calibration }) => behavedAs(calibration))
  const asFound = behaved.every((mode) => mode === behaved[0])
    ? `behaved as ${behaved[0]}`
    : `changed during the run (${behaved.join(", then ")})`
  return [
    "",
    `**Machine mode**: the HTTP rounds ran ${input.config.modes.map((mode) => `\`${MODE_TITLES[mode]}\``).join(", then ")}` +
      ` (\`--machine-mode\`); the machine as found ${asFound}. This machine answers loopback requests about four times ` +
      "more slowly per request when otherwise idle than when busy, so compare runs taken in the same mode. The " +
      "calibration: a 64-byte round trip over loopback TCP between two processes, as found and with a busy-loop on " +
      `every core (SCHED_IDLE, so it only takes CPU time nobody else wants); as found ${IDLE_SLOWDOWN}x slower or more ` +
      "means the machine idled between messages. The counting loop shows the CPU's own speed, which does not change.",
    "",
    table(
      [
        "calibration",
        "round trip as found µs",
        "with busy-loop µs",
        "as found / busy-loop",
        "behaved as",
        "counting loop ns/iteration"
      ],
      input.calibrations.map(({ when, calibration }) => [
        when,
        fixed(calibration.roundTripMicros, 1),
        fixed(calibration.roundTripMicrosBusyLoop, 1),
        fixed(calibration.roundTripMicros / calibration.roundTripMicrosBusyLoop, 2),
        behavedAs(calibration),
        fixed(calibration.loopNanos, 2)
      ])
    )
  ]
}

/** "0.83 (0.80)": CPU-per-request ratio, then req/s ratio. */
const ratioCell = (ratios: ReturnType<typeof compare>, other: string): string =>
  ratios === undefined ? "" : `${fixed(ratios.cpu, 2)} (${fixed(ratios.throughput, 2)}) of ${other}`

const cliSection = (input: ReportInput): string => {
  const groups = groupsOf(input.http)
  const measured = (group: Group) =>
    CLI_ADAPTERS.filter((adapter) => runsOf(group, cliKind(adapter, "default")).length > 0)
  if (!groups.some((group) => measured(group).length > 0)) return ""
  const rows = (mode: MachineMode) =>
    groups
      .filter((group) => group.mode === mode)
      .flatMap((group) =>
        measured(group).map((adapter) => {
          const server = cliKind(adapter, "default")
          const quiet = cliKind(adapter, "warn")
          const bare = CLI_BARE_OF[adapter]
          const ours = summaryOf(group, server)
          const warn = summaryOf(group, quiet)
          const logCost =
            ours === undefined || warn === undefined ? Number.NaN : ours.cpuMicrosPerRequest - warn.cpuMicrosPerRequest
          return [
            String(group.connections),
            group.scenario,
            LABELS[server],
            fixed(ours?.cpuMicrosPerRequest, 1),
            thousands(ours?.requestsPerSecond ?? Number.NaN),
            fixed(ours?.p99Ms, 2),
            ratioCell(compare(group, server, bare), LABELS[bare]),
            fixed(compare(group, server, bare)?.p99, 2),
            ratioCell(compare(group, server, "fastify-tsrest"), LABELS["fastify-tsrest"]),
            fixed(warn?.cpuMicrosPerRequest, 1),
            ratioCell(compare(group, quiet, bare), "bare"),
            Number.isFinite(logCost) && ours !== undefined
              ? `${logCost.toFixed(1)} µs (${((100 * logCost) / ours.cpuMicrosPerRequest).toFixed(0)}%), ` +
                `${fixed(ours.logLinesPerRequest, 2)} line, ${fixed(ours.logBytesPerRequest, 0)} B`
              : ""
          ]
        })
      )
  return [
    "## The server as users run it",
    "",
    "The CLI as `npm start -- --adapter A --port 0 --seed FILE` runs it (`node packages/server/dist/main.js`, the Node " +
      `running the bench, ${thousands(input.config.users)} users in the seed file, store-memory, its default log level, ` +
      "stderr appended to a file), beside its framework bare doing the same work by hand (the fetch adapter's: Hono on " +
      "@hono/node-server, the server it runs on in Node) and ts-rest on Fastify; the same CLI with `--log-level warn` " +
      "states what the access log costs. Headline: the server process's CPU time per request. Ratios read " +
      "\"CPU (req/s) of X\": X's CPU per request over the server's, the share of X's throughput the server would reach " +
      "with a core to itself, then in brackets the ratio of the measured req/s (both processes share this machine " +
      "with autocannon). p99 against bare: the server's p99 over its bare framework's. The access log: CPU per " +
      "request at the default level less at `warn`, its share of the default's, and what the log file received per " +
      "request.",
    "",
    ...tablePerMode(
      input,
      [
        "connections",
        "scenario",
        "server",
        "CPU µs/req",
        "req/s",
        "p99 ms",
        "against its bare framework: CPU (req/s)",
        "p99 against bare",
        "against ts-rest: CPU (req/s)",
        "log warn: CPU µs/req",
        "log warn against bare: CPU (req/s)",
        "access log per request"
      ],
      rows
    )
  ].join("\n")
}

/** The CLI on the PGlite store against the same CLI on the memory store: what keeping the data on disk costs. */
const pgliteSection = (input: ReportInput): string => {
  const groups = groupsOf(input.http).filter(
    (group) => runsOf(group, CLI_PGLITE).length > 0 && runsOf(group, CLI_PGLITE_AGAINST).length > 0
  )
  if (groups.length === 0) return ""
  const rows = (mode: MachineMode) =>
    groups
      .filter((group) => group.mode === mode)
      .map((group) => {
        const memory = summaryOf(group, CLI_PGLITE_AGAINST)
        const pglite = summaryOf(group, CLI_PGLITE)
        const added = (pglite?.cpuMicrosPerRequest ?? Number.NaN) - (memory?.cpuMicrosPerRequest ?? Number.NaN)
        return [
          String(group.connections),
          group.scenario,
          fixed(memory?.cpuMicrosPerRequest, 1),
          fixed(pglite?.cpuMicrosPerRequest, 1),
          fixed(added, 1),
          fixed((pglite?.cpuMicrosPerRequest ?? Number.NaN) / (memory?.cpuMicrosPerRequest ?? Number.NaN), 2),
          thousands(memory?.requestsPerSecond ?? Number.NaN),
          thousands(pglite?.requestsPerSecond ?? Number.NaN),
          fixed(memory?.p99Ms, 2),
          fixed(pglite?.p99Ms, 2)
        ]
      })
  return [
    "## The PGlite store",
    "",
    "The Fastify CLI at `--log-level warn` on `--store pglite --data-dir DIR` (a directory the run creates; the same " +
      "seed file), beside the same CLI on the memory store (`" +
      LABELS[CLI_PGLITE_AGAINST] +
      "`): what keeping the data on disk in the process costs per request. PGlite runs the PostgreSQL store's SQL in " +
      "the server's own process (one connection, one statement at a time), so its work, and the system time of its " +
      "writes, is in the server's CPU per request; the kernel's later writeback to the disk is not.",
    "",
    ...tablePerMode(
      input,
      [
        "connections",
        "scenario",
        "memory: CPU µs/req",
        "PGlite: CPU µs/req",
        "PGlite adds µs/req",
        "PGlite / memory CPU",
        "memory req/s",
        "PGlite req/s",
        "memory p99 ms",
        "PGlite p99 ms"
      ],
      rows
    )
  ].join("\n")
}

/** Issue 29's target: the CLI on PostgreSQL at least this share of bare Fastify + pg, in req/s and CPU per request. */
export const SQL_TARGET = 1.0

/** The CLI on PostgreSQL and on PGlite beside bare Fastify doing the same work by hand on the same database. */
const sqlSection = (input: ReportInput): string => {
  const pairs = [CLI_POSTGRES, CLI_PGLITE] as const
  const groups = groupsOf(input.http).filter((group) =>
    pairs.some((kind) => runsOf(group, kind).length > 0 && runsOf(group, SQL_BARE_OF[kind]).length > 0)
  )
  if (groups.length === 0) return ""
  const counted = (kind: BenchServerKind) => input.statements?.find((count) => count.kind === kind)
  const rows = (mode: MachineMode) =>
    groups
      .filter((group) => group.mode === mode)
      .flatMap((group) =>
        pairs.flatMap((kind) => {
          const bare = SQL_BARE_OF[kind]
          const ours = summaryOf(group, kind)
          const theirs = summaryOf(group, bare)
          const ratios = compare(group, kind, bare)
          if (ours === undefined || theirs === undefined || ratios === undefined) return []
          const statements = (server: BenchServerKind) => {
            const count = counted(server)
            return count === undefined
              ? "n/c"
              : `${fixed(count.statementsPerRequest, 2)} / ${fixed(count.roundTripsPerRequest, 2)}`
          }
          return [
            [
              String(group.connections),
              group.scenario,
              LABELS[kind],
              thousands(ours.requestsPerSecond),
              thousands(theirs.requestsPerSecond),
              fixed(ratios.throughput, 2),
              fixed(ours.cpuMicrosPerRequest, 0),
              fixed(theirs.cpuMicrosPerRequest, 0),
              fixed(ratios.cpu, 2),
              fixed(ours.p50Ms, 1),
              fixed(theirs.p50Ms, 1),
              fixed(ours.p99Ms, 1),
              fixed(theirs.p99Ms, 1),
              fixed(ours.maxMs, 0),
              fixed(theirs.maxMs, 0),
              statements(kind),
              statements(bare)
            ]
          ]
        })
      )
  return [
    "## The SQL stores (issues 29, 36)",
    "",
    "The Fastify CLI on `--store postgres` (a pool of 10, default log level, a schema of the run's own on " +
      "`--database-url`) beside bare Fastify + pg doing PUT language by hand (bench/src/bare-sql.ts: the token's " +
      "digest looked up, the same checks, one `INSERT ... ON CONFLICT DO UPDATE`; two unnamed statements, no cache, a " +
      "pool of 10); and the Fastify CLI on PGlite (`--log-level warn`, a data directory) beside the same bare server " +
      "on PGlite. Ratios: req/s ours over theirs; CPU theirs over ours (above 1: Accord spends less per request). " +
      "Statements / round trips per request were counted by a proxy in front of PostgreSQL (bench/src/pg-counter.ts) " +
      "on a second instance, 100 requests one at a time, outside the measured runs; PGlite has no wire to count (n/c: " +
      "the store's counts are those of packages/store-postgres/test/round-trips.test.ts, one statement a write, the " +
      "token cached; the bare one sends two).",
    "",
    ...tablePerMode(
      input,
      [
        "connections",
        "scenario",
        "server",
        "req/s",
        "bare req/s",
        "req/s ratio",
        "CPU µs/req",
        "bare CPU µs/req",
        "CPU ratio",
        "p50 ms",
        "bare p50 ms",
        "p99 ms",
        "bare p99 ms",
        "max ms",
        "bare max ms",
        "statements / round trips per req",
        "bare: statements / round trips"
      ],
      rows
    ),
    ...sqlAcceptanceLines(input).map((line) => `- ${line}`)
  ].join("\n")
}

/** Issue 36's bounds on one hot record: p99 at most this multiple of bare Fastify + pg's, and no write slower. */
export const HOT_P99_TARGET = 1.5
export const HOT_MAX_MS = 1000

/**
 * The CLI on PostgreSQL against bare Fastify + pg at each connection count above the first (50 by default): req/s and
 * CPU per request (issue 29; spread and hot); on one hot record (PUT language, user 0) also p99 and the slowest
 * write (issue 36: the latter means something in a run of 30 s, `--duration 30`).
 */
export const sqlAcceptanceLines = (input: ReportInput): ReadonlyArray<string> =>
  groupsOf(input.http).flatMap((group) => {
    const ratios = compare(group, CLI_POSTGRES, SQL_BARE_OF[CLI_POSTGRES])
    const ours = summaryOf(group, CLI_POSTGRES)
    if (ratios === undefined || ours === undefined || group.connections < Math.max(...input.config.connections)) {
      return []
    }
    const hot = !group.scenario.includes("spread")
    const met =
      ratios.throughput >= SQL_TARGET &&
      ratios.cpu >= SQL_TARGET &&
      (!hot || (ratios.p99 <= HOT_P99_TARGET && ours.maxMs <= HOT_MAX_MS))
    return [
      `${met ? "PASS" : "FAIL"}  ${groupLabel(group)}: ${LABELS[CLI_POSTGRES]} against ${LABELS[SQL_BARE_OF[CLI_POSTGRES]]}: ` +
        `req/s ${fixed(ratios.throughput, 2)} >= ${SQL_TARGET}, CPU/req ${fixed(ratios.cpu, 2)} >= ${SQL_TARGET}` +
        (hot
          ? `, p99 ${fixed(ratios.p99, 2)}x <= ${HOT_P99_TARGET}x, slowest ${fixed(ours.maxMs, 0)} ms <= ${HOT_MAX_MS} ms (issue 36)`
          : " (issues 29, 36)")
    ]
  })

/** One line per comparison the issue sets a target for, with pass/fail per figure. */
export const acceptanceLines = (input: ReportInput): ReadonlyArray<string> => {
  const modes = modesOf(input)
  const verdict = (met: boolean) => (met ? "pass" : "FAIL")
  return groupsOf(input.http).flatMap((group) =>
    CLI_ADAPTERS.flatMap((adapter) => {
      const server = cliKind(adapter, "default")
      const against = (other: BenchServerKind, target: number, withP99: boolean) => {
        const ratios = compare(group, server, other)
        if (ratios === undefined) return []
        const cpuMet = ratios.cpu >= target
        const throughputMet = ratios.throughput >= target
        const p99Met = ratios.p99 <= CLI_TARGETS.p99
        const met = cpuMet && throughputMet && (!withP99 || p99Met)
        const where = `${modes.length > 1 ? `${group.mode}, ` : ""}${groupLabel(group)}`
        return [
          `${met ? "PASS" : "FAIL"}  ${where}: ${LABELS[server]} against ${LABELS[other]}: ` +
            `CPU/req ${fixed(ratios.cpu, 2)} >= ${target} ${verdict(cpuMet)}, ` +
            `req/s ${fixed(ratios.throughput, 2)} >= ${target} ${verdict(throughputMet)}` +
            (withP99 ? `, p99 ${fixed(ratios.p99, 2)}x <= ${CLI_TARGETS.p99}x ${verdict(p99Met)}` : "")
        ]
      }
      return [
        ...against(CLI_BARE_OF[adapter], CLI_TARGETS.bare[adapter], true),
        ...(adapter === "fastify" ? against("fastify-tsrest", CLI_TARGETS.tsRest, false) : [])
      ]
    })
  )
}

const acceptanceSection = (input: ReportInput): string => {
  const lines = acceptanceLines(input)
  if (lines.length === 0) return ""
  const passed = lines.filter((line) => line.startsWith("PASS")).length
  return [
    "## Acceptance check (issue 19)",
    "",
    `The CLI at its default log level: Fastify >= ${CLI_TARGETS.bare.fastify} of bare Fastify and >= ${CLI_TARGETS.tsRest} ` +
      `of ts-rest; Koa and Express >= ${CLI_TARGETS.bare.koa} of their bare framework; fetch >= ${CLI_TARGETS.bare.fetch} ` +
      `of Hono on @hono/node-server; p99 at most ${CLI_TARGETS.p99} times the bare framework's. Checked on both the CPU ` +
      `per request and the measured req/s. It informs; it fails nothing. ${passed} of ${lines.length} lines pass.`,
    "",
    "```",
    ...lines,
    "```"
  ].join("\n")
}

/** Accord's adapters without the CLI, against their bare frameworks and the two peers (the first connection count). */
const adaptersSection = (input: ReportInput): string => {
  const groups = groupsOf(input.http).filter((group) => ADAPTER_KINDS.some((kind) => runsOf(group, kind).length > 0))
  if (groups.length === 0) return ""
  const others = (adapter: AdapterKind) => [BARE_OF[adapter], ...PEER_KINDS]
  return [
    "## The adapters without the CLI, against the bare frameworks and two peers",
    "",
    "Accord's Fastify and Koa adapters started by the bench's own server.ts on store-memory (no access log, no CLI), " +
      "beside the bare baselines and the two peers: `fastify-tsrest` (ts-rest on Fastify) and `effect-httpapi` (effect's " +
      "HttpApi on Node's HTTP server), which do the same work by hand on a Map (bench/README.md). Below 1 reads \"0.61 " +
      'of", above "2.50x"; "CPU per request other/adapter" is the throughput ratio with a core each. The targets ' +
      "(issue 5) apply to the adapters against their bare framework.",
    "",
    ...perMode(input, (mode) => {
      const mine = groups.filter((group) => group.mode === mode)
      if (mine.length === 0) return []
      const adaptersOf = (group: Group) => ADAPTER_KINDS.filter((kind) => runsOf(group, kind).length > 0)
      const glance = mine.flatMap((group) =>
        adaptersOf(group).map((adapter) => {
          const measured = others(adapter).flatMap((other) => {
            const ratios = compare(group, adapter, other)
            return ratios === undefined ? [] : [{ label: LABELS[other], ratios }]
          })
          return (
            `- ${groupLabel(group)}: ${LABELS[adapter]} ${measured.map(({ label, ratios }) => share(ratios.throughput, label)).join(", ")} in req/s; ` +
            `p99 ${measured.map(({ label, ratios }) => share(ratios.p99, label)).join(", ")}.`
          )
        })
      )
      const rows = mine.flatMap((group) =>
        adaptersOf(group).flatMap((adapter) =>
          others(adapter).flatMap((other) => {
            const ratios = compare(group, adapter, other)
            if (ratios === undefined) return []
            const target = TARGETS[FRAMEWORK_OF[adapter]]
            const isBaseline = other === BARE_OF[adapter]
            const met = ratios.throughput >= target && ratios.p99 <= TARGETS.p99
            return [
              [
                groupLabel(group),
                LABELS[adapter],
                LABELS[other],
                fixed(ratios.cpu, 2),
                fixed(ratios.throughput, 2),
                fixed(ratios.paired, 2),
                fixed(ratios.p99, 2),
                isBaseline ? `>= ${target}, <= ${TARGETS.p99}` : "",
                isBaseline ? (met ? "met" : "missed") : ""
              ]
            ]
          })
        )
      )
      return [
        ...glance,
        "",
        table(
          [
            "load",
            "adapter",
            "against",
            "CPU per request other/adapter",
            "req/s adapter/other",
            "paired (median of per-round ratios)",
            "p99 adapter/other",
            "target",
            ""
          ],
          rows
        )
      ]
    })
  ].join("\n")
}

const serversSection = (input: ReportInput): string => {
  if (input.http.length === 0) return ""
  const { config } = input
  return [
    "## Every server",
    "",
    `Each server runs in its own process (${thousands(config.users)} users, 3 payment methods each) and is driven by ` +
      `autocannon in the bench process: first ${config.initialWarmupSeconds} s of unmeasured load per server and ` +
      `scenario (a fresh process spends its first seconds compiling), then ${config.rounds} rounds of ` +
      `${config.warmupSeconds} s warm-up and ${config.durationSeconds} s measured per server, scenario and connection ` +
      `count (${config.connections.join(", ")}), every server in every round, in one order in odd rounds and the reverse ` +
      "in even ones, each next to its baseline. Each scenario sends two valid requests in turn, so every other request " +
      "changes the stored state. Latencies are exact (per response), figures are medians over the rounds; CPU is the " +
      "server process's user + system time from /proc per answered request; the log columns are what a CLI server's " +
      "stderr file received per request.",
    "",
    ...tablePerMode(
      input,
      [
        "connections",
        "scenario",
        "server",
        "CPU µs/req",
        "req/s",
        "p50 ms",
        "p99 ms",
        "log lines, bytes per request",
        "req/s per round"
      ],
      (mode) =>
        groupsOf(input.http)
          .filter((group) => group.mode === mode)
          .flatMap((group) =>
            [...new Set(group.runs.map((run) => run.kind))].map((kind) => {
              const summary = summaryOf(group, kind)
              return [
                String(group.connections),
                group.scenario,
                LABELS[kind],
                fixed(summary?.cpuMicrosPerRequest, 1),
                thousands(summary?.requestsPerSecond ?? Number.NaN),
                fixed(summary?.p50Ms, 2),
                fixed(summary?.p99Ms, 2),
                summary?.logBytesPerRequest === undefined
                  ? ""
                  : `${fixed(summary.logLinesPerRequest, 2)}, ${fixed(summary.logBytesPerRequest, 0)} B`,
                (summary?.perRound ?? []).map(thousands).join(", ")
              ]
            })
          )
    )
  ].join("\n")
}

/** The stages in the order each row adds them; a bare framework's rows skip `bridge` (it has none) and `log`. */
const STAGES = ["adapter in", "bridge", "body", "core", "write", "log"] as const
const STAGE_MEANING: Readonly<Record<(typeof STAGES)[number], string>> = {
  "adapter in": "the framework takes the request to its handler (Accord: the standalone server's guard and drain too)",
  bridge: "the Node bridge's neutral request, one microtask later",
  body: "the body taken (Accord: from Node's buffer; bare: the framework's parser)",
  core: "checks, decoding, use case and encoding (Accord: the core's handler; bare: bare-domain.ts by hand)",
  write: "the answer written as the server writes it (Accord: the CLI in process at `--log-level warn`)",
  log: "the access log line (Accord: the CLI in process at its default level)"
}

const stagesSection = (input: ReportInput): string => {
  const stages = input.stages
  if (stages === undefined || stages.results.length === 0) return ""
  const floor = stages.results.find((result) => result.server === "node")?.cpuMicrosPerRequest
  const frameworks = [...new Set(stages.results.map((result) => result.framework))].filter((name) => name !== "node")
  const rowsOf = (framework: string) =>
    STAGES.map((stage) => {
      const at = (server: string) =>
        stages.results.find(
          (result) => result.framework === framework && result.server === server && result.stage === stage
        )?.cpuMicrosPerRequest
      const added = (server: string) => {
        const index = STAGES.indexOf(stage)
        const here = at(server)
        if (here === undefined) return ""
        let previous: number | undefined = index === 0 ? floor : undefined
        for (let back = index - 1; back >= 0 && previous === undefined; back--) {
          const earlier = STAGES[back]
          previous =
            earlier === undefined
              ? undefined
              : stages.results.find(
                  (result) => result.framework === framework && result.server === server && result.stage === earlier
                )?.cpuMicrosPerRequest
          if (back === 0 && previous === undefined) previous = floor
        }
        return previous === undefined ? "" : fixed(here - previous, 1)
      }
      const cumulative = (server: string) => {
        const value = at(server)
        return value === undefined ? "" : fixed(value, 1)
      }
      return [
        framework,
        stage,
        cumulative("accord"),
        added("accord"),
        cumulative("bare"),
        added("bare"),
        framework === "fastify" && stage === "write" ? cumulative("ts-rest") : "",
        STAGE_MEANING[stage]
      ]
    })
  return [
    "## The request path stage by stage (issue 37)",
    "",
    `One process (bench/src/stages.ts): each row a real server on loopback doing one stage more than the row above, then ` +
      `writing the same canned answer with Node's \`writeHead\` + \`end\` until the row that writes its own; a client in ` +
      `the same process sends PUT language on ${stages.connections} keep-alive connections, ${thousands(stages.requestsPerRun)} ` +
      `requests a run, ${stages.rounds} rounds (alternating order), medians. CPU is the whole process's per request ` +
      `(server and client); Node's own server answering the canned bytes (the client's and Node's share, in every row) ` +
      `costs ${floor === undefined ? "n/a" : fixed(floor, 1)} µs. "added" is each row less the one above (the first less ` +
      `that floor). Instructions per request of any row: \`node bench/dist/stage-instructions.js fastify/accord/core ...\` ` +
      `(callgrind, load-free).`,
    "",
    table(
      [
        "framework",
        "stage",
        "Accord µs/req",
        "Accord added",
        "bare µs/req",
        "bare added",
        "ts-rest µs/req",
        "what the row adds"
      ],
      frameworks.flatMap(rowsOf)
    )
  ].join("\n")
}

const microSection = (input: ReportInput): string => {
  if (input.micro.length === 0) return ""
  return [
    "## Micro benchmarks (in process, tinybench)",
    "",
    "Use cases through the core on store-memory, run as the handler runs them (`runtime.runFork`, exit read at once; the plan entry, " +
      "which waits for scrypt, with `runtime.runPromise`); the handler is `makeHttpHandler(...)` called directly with a " +
      'prepared request (routing, credentials, media type, strict JSON, use case, response), no socket. The "part" rows ' +
      "time pieces of the handler's work on their own.",
    "",
    table(
      ["benchmark", "ops/s", "mean µs/op", "p99 µs/op", "samples"],
      input.micro.map((result) => [
        result.name,
        thousands(result.opsPerSecond),
        fixed(result.meanMicros, 1),
        fixed(result.p99Micros, 1),
        thousands(result.samples)
      ])
    )
  ].join("\n")
}

const memorySection = (input: ReportInput): string => {
  const memory = input.memory
  if (memory === undefined) return ""
  const rss = memory.after.rss - memory.before.rss
  const heap = memory.after.heapUsed - memory.before.heapUsed
  return [
    "## Memory of store-memory",
    "",
    `${thousands(memory.users)} users, each with a token (SHA-256 digest), a preferences record and ` +
      `${memory.paymentMethodsPerUser} payment methods, written through the ports (StoreAdmin.loadSeed, then ` +
      `getLanguagePreferences per user) in ${fixed(memory.seedSeconds, 1)} s, measured after GC in a fresh process.`,
    "",
    table(
      ["", "before", "after", "store", "per user"],
      [
        ["rss", mib(memory.before.rss), mib(memory.after.rss), mib(rss), `${thousands(rss / memory.users)} B`],
        [
          "heapUsed",
          mib(memory.before.heapUsed),
          mib(memory.after.heapUsed),
          mib(heap),
          `${thousands(heap / memory.users)} B`
        ]
      ]
    )
  ].join("\n")
}

const eventsSection = (input: ReportInput): string => {
  const events = input.events
  if (events === undefined) return ""
  const sql = events.writes.some((row) => row.server !== undefined)
  const { relay } = events
  return [
    "## Events (issue 31)",
    "",
    "What recording an event adds to a write: the same port call, `PaymentMethods.setDefault` moving one user's " +
      "default between two methods (so every call changes it), with the event set-default records " +
      "(`payment_method.default_changed`: on the SQL stores two more CTEs in the same statement, on the memory store an " +
      "append to its log) and with none (`() => []`), in alternating blocks of 100, each call through " +
      "`runtime.runPromise`; CPU is this process's (PGlite runs in it), wall is the time per call" +
      (sql
        ? "; on PostgreSQL (a pool of one, a schema of its own) also its backend process's CPU, from /proc (in 10 ms ticks, read around each block)."
        : ".") +
      " Then one relay (`relayOnce` with the domain's defaults: 100 claimed at a time, 8 at once; the server claims 8) delivering events " +
      "recorded in the memory store as signed webhooks (`webhookSink`) to a node:http receiver in another process " +
      "on loopback that answers 204; CPU is the relay's process.",
    "",
    table(
      [
        "store",
        "writes each",
        "CPU µs/write with event",
        "without",
        "added",
        "wall µs/write with",
        "without",
        ...(sql ? ["DB backend CPU µs with", "without", "added"] : [])
      ],
      events.writes.map((row) => [
        row.store,
        thousands(row.writes),
        fixed(row.withCpuMicros, 1),
        fixed(row.noneCpuMicros, 1),
        fixed(row.withCpuMicros - row.noneCpuMicros, 1),
        fixed(row.withWallMicros, 1),
        fixed(row.noneWallMicros, 1),
        ...(sql
          ? [
              fixed(row.server?.withCpuMicros, 1),
              fixed(row.server?.noneCpuMicros, 1),
              fixed(row.server === undefined ? undefined : row.server.withCpuMicros - row.server.noneCpuMicros, 1)
            ]
          : [])
      ])
    ),
    "",
    `Relay: ${thousands(relay.events)} events delivered in ${fixed(relay.seconds, 2)} s, ` +
      `${thousands(relay.eventsPerSecond)} events/s, ${fixed(relay.cpuMicrosPerEvent, 1)} µs of CPU per event.`
  ].join("\n")
}

const streamsSection = (input: ReportInput): string => {
  const result = input.streams
  if (result === undefined) return ""
  const { oneUser, perUser } = result
  const perStream = (field: "rss" | "heapUsed") =>
    thousands(Math.round((result.open[field] - result.before[field]) / result.streams))
  return [
    "## Event streams (issue 39)",
    "",
    `${thousands(result.streams)} users each follow their events (\`followEvents\` of @accord/client/events-stream, ` +
      "in the bench's process) from one server process (Accord on Fastify over the memory store, started with " +
      "--expose-gc); then one user's change, one after the other, each timed from the write sent to its stream " +
      `receiving it, the other streams open and idle; then a change per user (${perUser.concurrency} writes at ` +
      "once), every stream receiving its user's event. Memory is the server's after GC, before the streams and with " +
      "them all open. The client and the server share the machine's cores.",
    "",
    table(
      ["figure", "value"],
      [
        ["streams opened in", `${fixed(result.openSeconds, 2)} s`],
        ["server memory per open stream (RSS)", `${perStream("rss")} bytes`],
        ["server memory per open stream (heap)", `${perStream("heapUsed")} bytes`],
        [
          `one user's change to its stream (${oneUser.samples} samples)`,
          `p50 ${fixed(oneUser.p50Millis, 1)} ms, max ${fixed(oneUser.maxMillis, 1)} ms`
        ],
        ["a change per user: events delivered per second", thousands(Math.round(perUser.eventsPerSecond))],
        [
          "a change per user: from the first write to the last stream receiving its event",
          `${fixed(perUser.seconds, 2)} s`
        ],
        [
          "a change per user: from the last write's answer to the last event",
          `${fixed(perUser.lastWriteToLastEventMillis, 1)} ms`
        ],
        [
          "a change per user: each write to its stream",
          `p50 ${fixed(perUser.p50Millis, 1)} ms, p99 ${fixed(perUser.p99Millis, 1)} ms`
        ],
        ["server CPU per event delivered (write included)", `${fixed(result.serverCpuMicrosPerEvent, 1)} µs`]
      ]
    )
  ].join("\n")
}

export const renderReport = (input: ReportInput): { readonly console: string; readonly markdown: string } => {
  const sections = [
    cliSection(input),
    pgliteSection(input),
    sqlSection(input),
    acceptanceSection(input),
    adaptersSection(input),
    serversSection(input),
    stagesSection(input),
    microSection(input),
    memorySection(input),
    eventsSection(input),
    streamsSection(input)
  ].filter((part) => part !== "")
  const markdown = [
    "# Benchmark results",
    "",
    `Written by \`npm run bench\` on ${input.started.toISOString()} (${fixed(input.seconds, 0)} s); do not edit by hand. ` +
      "The last section is copied from `bench/remaining-costs.md`. Absolute numbers depend on the machine, its mode and " +
      "what else runs on it; the ratios, measured alternately in one run, are the figures to compare.",
    "",
    "## Machine",
    "",
    machineSection(input),
    "",
    ...sections.flatMap((section) => [section.trimEnd(), ""]),
    input.remainingCosts.trim(),
    ""
  ].join("\n")
  // The console ends with the acceptance check, where the eye lands when the run is over.
  const consoleText = [machineSection(input), ...sections.filter((section) => !section.startsWith("## Acceptance"))]
    .concat(acceptanceSection(input) === "" ? [] : [acceptanceSection(input)])
    .map((section) => section.trimEnd())
    .join("\n\n")
  return { console: consoleText, markdown }
}
