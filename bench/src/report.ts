import {
  ADAPTER_KINDS,
  BARE_OF,
  PEER_KINDS,
  type AdapterKind,
  type MemoryResult,
  type MicroResult,
  type ServerKind
} from "./protocol.js"

/** Turns the measurements into the tables printed at the end and written to bench/RESULTS.md. */

export interface HttpRun {
  readonly round: number
  readonly scenario: string
  readonly kind: ServerKind
  readonly requestsPerSecond: number
  readonly p50Ms: number
  readonly p99Ms: number
  /** CPU time (user + system) the server process used per request during the run. */
  readonly cpuMicrosPerRequest: number
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
  readonly started: Date
  readonly seconds: number
  readonly config: {
    readonly durationSeconds: number
    readonly warmupSeconds: number
    readonly initialWarmupSeconds: number
    readonly rounds: number
    readonly connections: number
    readonly users: number
  }
  readonly http: ReadonlyArray<HttpRun>
  readonly micro: ReadonlyArray<MicroResult>
  readonly memory: MemoryResult | undefined
  readonly median: (values: ReadonlyArray<number>) => number
  readonly remainingCosts: string
}

/** Targets of the benchmark issue: adapter req/s at least this share of its bare framework's, p99 at most 1.3x. */
export const TARGETS = { fastify: 0.8, koa: 0.9, p99: 1.3 } as const

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [header, header.map(() => "---"), ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n")

const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : "n/a")
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
const thousands = (value: number): string => Math.round(value).toLocaleString("en-US")
const load = (values: ReadonlyArray<number>): string => values.map((value) => value.toFixed(2)).join(" / ")

/** How the tables name the servers an adapter is compared with. */
const LABELS: Readonly<Record<ServerKind, string>> = {
  "fastify-accord": "Fastify adapter",
  "fastify-bare": "bare Fastify",
  "koa-accord": "Koa adapter",
  "koa-bare": "bare Koa",
  "fastify-tsrest": "ts-rest",
  "effect-httpapi": "Effect HttpApi"
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

const httpSection = (input: ReportInput): string => {
  if (input.http.length === 0) return ""
  const { median } = input
  const scenarios = [...new Set(input.http.map((run) => run.scenario))]
  const kinds = [...new Set(input.http.map((run) => run.kind))]
  const of = (scenario: string, kind: ServerKind) =>
    input.http.filter((run) => run.scenario === scenario && run.kind === kind)
  const serverRows = scenarios.flatMap((scenario) =>
    kinds.map((kind) => {
      const runs = of(scenario, kind)
      return [
        scenario,
        kind,
        thousands(median(runs.map((run) => run.requestsPerSecond))),
        fixed(median(runs.map((run) => run.p50Ms)), 2),
        fixed(median(runs.map((run) => run.p99Ms)), 2),
        fixed(median(runs.map((run) => run.cpuMicrosPerRequest)), 1),
        runs.map((run) => thousands(run.requestsPerSecond)).join(", ")
      ]
    })
  )
  /** An adapter against another server in one scenario; undefined when that server was not measured. */
  const compare = (scenario: string, adapter: AdapterKind, other: ServerKind) => {
    const accord = of(scenario, adapter)
    const them = of(scenario, other)
    if (accord.length === 0 || them.length === 0) return undefined
    return {
      throughput: median(accord.map((run) => run.requestsPerSecond)) / median(them.map((run) => run.requestsPerSecond)),
      paired: median(
        accord.map(
          (run) =>
            run.requestsPerSecond / (them.find((theirs) => theirs.round === run.round)?.requestsPerSecond ?? Number.NaN)
        )
      ),
      cpu: median(them.map((run) => run.cpuMicrosPerRequest)) / median(accord.map((run) => run.cpuMicrosPerRequest)),
      p99: median(accord.map((run) => run.p99Ms)) / median(them.map((run) => run.p99Ms))
    }
  }
  const adapters = ADAPTER_KINDS.filter((adapter) => kinds.includes(adapter))
  const ratioRows = scenarios.flatMap((scenario) =>
    adapters.flatMap((adapter) =>
      [BARE_OF[adapter], ...PEER_KINDS].flatMap((other) => {
        const ratios = compare(scenario, adapter, other)
        if (ratios === undefined) return []
        const framework = FRAMEWORK_OF[adapter]
        const isBaseline = other === BARE_OF[adapter]
        const met = ratios.throughput >= TARGETS[framework] && ratios.p99 <= TARGETS.p99
        return [
          [
            scenario,
            LABELS[adapter],
            LABELS[other],
            fixed(ratios.throughput, 2),
            fixed(ratios.paired, 2),
            fixed(ratios.cpu, 2),
            fixed(ratios.p99, 2),
            isBaseline ? `>= ${TARGETS[framework]}, <= ${TARGETS.p99}` : "",
            isBaseline ? (met ? "met" : "missed") : ""
          ]
        ]
      })
    )
  )
  /** "PUT language: Fastify adapter 0.61 of bare Fastify, 0.60 of ts-rest, 2.50x Effect HttpApi (req/s); p99 ...". */
  const glance = scenarios.flatMap((scenario) =>
    adapters.map((adapter) => {
      const others = [BARE_OF[adapter], ...PEER_KINDS].flatMap((other) => {
        const ratios = compare(scenario, adapter, other)
        return ratios === undefined ? [] : [{ label: LABELS[other], ratios }]
      })
      return (
        `- ${scenario}: ${LABELS[adapter]} ${others.map(({ label, ratios }) => share(ratios.throughput, label)).join(", ")} in req/s; ` +
        `p99 ${others.map(({ label, ratios }) => share(ratios.p99, label)).join(", ")}.`
      )
    })
  )
  return [
    "## HTTP: adapters against the bare frameworks and two peers",
    "",
    `Each server runs in its own process (${thousands(input.config.users)} users, 3 payment methods each) and is ` +
      `driven by autocannon in the bench process: ${input.config.connections} connections; first ${input.config.initialWarmupSeconds} s of ` +
      `unmeasured load per server and scenario (a fresh process spends its first seconds compiling), then ${input.config.rounds} rounds ` +
      `of ${input.config.warmupSeconds} s warm-up and ${input.config.durationSeconds} s measured per server and scenario, every server ` +
      "in every round, in one order in odd rounds and the reverse in even ones. The adapters run on store-memory; the bare " +
      "baselines (`-bare`) and the peers (`fastify-tsrest`: ts-rest on Fastify; `effect-httpapi`: effect's HttpApi on Node's " +
      "HTTP server) do the same work by hand on a Map (bench/README.md). Each scenario sends two valid requests in turn, so " +
      "every other request changes the stored state. Latencies are exact (per response), medians are over the rounds.",
    "",
    table(
      ["scenario", "server", "req/s (median)", "p50 ms", "p99 ms", "server CPU µs/req", "req/s per round"],
      serverRows
    ),
    "",
    'At a glance (median req/s and p99 of the adapter over the other server\'s; below 1 reads "0.61 of", above "2.50x"):',
    "",
    ...glance,
    "",
    table(
      [
        "scenario",
        "adapter",
        "against",
        "req/s adapter/other",
        "paired (median of per-round ratios)",
        "CPU per request other/adapter",
        "p99 adapter/other",
        "target",
        ""
      ],
      ratioRows
    ),
    "",
    '"CPU per request other/adapter" is the throughput ratio the two servers would reach with a core each to themselves: ' +
      "the server processes' user + system time (from /proc) per answered request, which the load of other processes " +
      "on the machine disturbs much less than req/s. The targets apply to the adapters against their bare framework only."
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

export const renderReport = (input: ReportInput): { readonly console: string; readonly markdown: string } => {
  const { machine } = input
  const body = [
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
    httpSection(input),
    microSection(input),
    memorySection(input)
  ]
    .filter((part) => part !== "")
    .join("\n\n")
  const markdown = [
    "# Benchmark results",
    "",
    `Written by \`npm run bench\` on ${input.started.toISOString()} (${fixed(input.seconds, 0)} s); do not edit by hand. ` +
      "The last section is copied from `bench/remaining-costs.md`. Absolute numbers depend on the machine and on what " +
      "else runs on it; the adapter/bare ratios, measured alternately in one run, are the figures to compare.",
    "",
    "## Machine",
    "",
    body,
    "",
    input.remainingCosts.trim(),
    ""
  ].join("\n")
  return { console: body, markdown }
}
