import type { MemoryResult, MicroResult, ServerKind } from "./protocol.js"

/** Turns the measurements into the tables printed at the end and written to bench/RESULTS.md. */

export interface HttpRun {
  readonly round: number
  readonly scenario: string
  readonly framework: "fastify" | "koa"
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

/** CONTRACT-free targets of issue 5: adapter req/s at least this share of its bare framework's, p99 at most 1.3x. */
export const TARGETS = { fastify: 0.8, koa: 0.9, p99: 1.3 } as const

const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string =>
  [header, header.map(() => "---"), ...rows].map((cells) => `| ${cells.join(" | ")} |`).join("\n")

const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : "n/a")
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
const thousands = (value: number): string => Math.round(value).toLocaleString("en-US")
const load = (values: ReadonlyArray<number>): string => values.map((value) => value.toFixed(2)).join(" / ")

const httpSection = (input: ReportInput): string => {
  if (input.http.length === 0) return ""
  const { median } = input
  const scenarios = [...new Set(input.http.map((run) => run.scenario))]
  const kinds = [...new Set(input.http.map((run) => run.kind))]
  const of = (scenario: string, kind: ServerKind) => input.http.filter((run) => run.scenario === scenario && run.kind === kind)
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
  const ratioRows = scenarios.flatMap((scenario) =>
    (["fastify", "koa"] as const).map((framework) => {
      const accord = of(scenario, `${framework}-accord`)
      const bare = of(scenario, `${framework}-bare`)
      const throughput = median(accord.map((run) => run.requestsPerSecond)) / median(bare.map((run) => run.requestsPerSecond))
      const paired = median(
        accord.map((run) => run.requestsPerSecond / (bare.find((other) => other.round === run.round)?.requestsPerSecond ?? Number.NaN))
      )
      const p99 = median(accord.map((run) => run.p99Ms)) / median(bare.map((run) => run.p99Ms))
      const cpu = median(bare.map((run) => run.cpuMicrosPerRequest)) / median(accord.map((run) => run.cpuMicrosPerRequest))
      const met = throughput >= TARGETS[framework] && p99 <= TARGETS.p99
      return [
        scenario,
        framework,
        fixed(throughput, 2),
        fixed(paired, 2),
        fixed(cpu, 2),
        fixed(p99, 2),
        `>= ${TARGETS[framework]}, <= ${TARGETS.p99}`,
        met ? "met" : "missed"
      ]
    })
  )
  return [
    "## HTTP: adapters against the bare frameworks",
    "",
    `Each server runs in its own process on store-memory (${thousands(input.config.users)} users, 3 payment methods each) and is ` +
      `driven by autocannon in the bench process: ${input.config.connections} connections; first ${input.config.initialWarmupSeconds} s of ` +
      `unmeasured load per server and scenario (a fresh process spends its first seconds compiling), then ${input.config.rounds} rounds ` +
      `of ${input.config.warmupSeconds} s warm-up and ${input.config.durationSeconds} s measured, adapter and baseline alternating (A B, then B A). ` +
      "Each scenario sends two valid requests in turn, so every other request changes the stored state. Latencies are exact " +
      "(per response), medians are over the rounds.",
    "",
    table(["scenario", "server", "req/s (median)", "p50 ms", "p99 ms", "server CPU µs/req", "req/s per round"], serverRows),
    "",
    table(
      ["scenario", "framework", "req/s adapter/bare", "paired (median of per-round ratios)", "CPU per request bare/adapter", "p99 adapter/bare", "target", ""],
      ratioRows
    ),
    "",
    "\"CPU per request bare/adapter\" is the throughput ratio the two servers would reach with a core each to themselves: " +
      "the server processes' user + system time (from /proc) per answered request, which the load of other processes " +
      "on the machine disturbs much less than req/s."
  ].join("\n")
}

const microSection = (input: ReportInput): string => {
  if (input.micro.length === 0) return ""
  return [
    "## Micro benchmarks (in process, tinybench)",
    "",
    "Use cases through the core on store-memory, run as the handler runs them (`runtime.runSyncExit`; the plan entry, " +
      "which waits for scrypt, with `runtime.runPromise`); the handler is `makeHttpHandler(...)` called directly with a " +
      "prepared request (routing, credentials, media type, strict JSON, use case, response), no socket. The \"part\" rows " +
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
        ["heapUsed", mib(memory.before.heapUsed), mib(memory.after.heapUsed), mib(heap), `${thousands(heap / memory.users)} B`]
      ]
    )
  ].join("\n")
}

export const renderReport = (input: ReportInput): { readonly console: string; readonly markdown: string } => {
  const { machine } = input
  const body = [
    table(
      ["CPU", "cores", "memory", "Node", "kernel", "load 1/5/15 min before", "after"],
      [[machine.cpu, String(machine.cores), mib(machine.memoryBytes), machine.node, machine.kernel, load(machine.loadBefore), load(machine.loadAfter)]]
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
