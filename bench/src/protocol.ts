/** What the bench and its child processes say to each other over IPC. */

/**
 * The servers server.ts starts in a process of its own: Accord's adapters without the CLI around them, the bare
 * baselines doing the same work by hand, and two peers a user comparing contract-first libraries would pick instead
 * (ts-rest on Fastify, effect's HttpApi on Node's HTTP server).
 */
export const SERVER_KINDS = [
  "fastify-accord",
  "fastify-bare",
  "koa-accord",
  "koa-bare",
  "express-bare",
  "hono-bare",
  "fastify-tsrest",
  "effect-httpapi",
  "fastify-bare-pg",
  "fastify-bare-pglite"
] as const
export type ServerKind = (typeof SERVER_KINDS)[number]

export const ADAPTER_KINDS = ["fastify-accord", "koa-accord"] as const satisfies ReadonlyArray<ServerKind>
export type AdapterKind = (typeof ADAPTER_KINDS)[number]

/** Each adapter's baseline: its framework, bare. */
export const BARE_OF = { "fastify-accord": "fastify-bare", "koa-accord": "koa-bare" } as const satisfies Record<
  AdapterKind,
  ServerKind
>

export const PEER_KINDS = ["fastify-tsrest", "effect-httpapi"] as const satisfies ReadonlyArray<ServerKind>
export type PeerKind = (typeof PEER_KINDS)[number]

export const isServerKind = (value: string | undefined): value is ServerKind =>
  SERVER_KINDS.some((kind) => kind === value)

/** The CLI's adapters (`npm start -- --adapter A`), each run by the bench as a user runs it (cli-server.ts). */
export const CLI_ADAPTERS = ["fastify", "koa", "express", "fetch"] as const
export type CliAdapter = (typeof CLI_ADAPTERS)[number]

/** The CLI at its default log level (one access log line per request), and with `--log-level warn` (none). */
export type CliKind = `cli-${CliAdapter}` | `cli-${CliAdapter}-warn`
export const cliKind = (adapter: CliAdapter, logLevel: "default" | "warn"): CliKind =>
  logLevel === "warn" ? `cli-${adapter}-warn` : `cli-${adapter}`

/** What each CLI adapter is compared with: its framework, bare; the fetch adapter's is Hono on @hono/node-server. */
export const CLI_BARE_OF = {
  fastify: "fastify-bare",
  koa: "koa-bare",
  express: "express-bare",
  fetch: "hono-bare"
} as const satisfies Record<CliAdapter, ServerKind>

/**
 * The Fastify CLI on `--store pglite --data-dir DIR` at `--log-level warn`: beside `cli-fastify-warn` (the memory
 * store, same adapter and level), it states what the PGlite store costs per request.
 */
export const CLI_PGLITE = "cli-fastify-pglite-warn" as const
/** The memory-store server the PGlite row is read against. */
export const CLI_PGLITE_AGAINST = "cli-fastify-warn" as const satisfies CliKind

/**
 * The Fastify CLI on `--store postgres` (a pool of 10, its default) at its default log level, as issue 29 measured it,
 * beside bare Fastify doing the same work by hand on node-postgres (`fastify-bare-pg`, bare-sql.ts); and PGlite's
 * row (`CLI_PGLITE`) beside the same bare baseline on PGlite (`fastify-bare-pglite`). PUT language only.
 */
export const CLI_POSTGRES = "cli-fastify-postgres" as const
export const SQL_BARE_OF = {
  [CLI_POSTGRES]: "fastify-bare-pg",
  [CLI_PGLITE]: "fastify-bare-pglite"
} as const satisfies Record<string, ServerKind>
export type SqlKind = keyof typeof SQL_BARE_OF | (typeof SQL_BARE_OF)[keyof typeof SQL_BARE_OF]
/** The servers on a SQL database, measured on PUT language only (the bare ones serve nothing else). */
export const SQL_KINDS: ReadonlyArray<SqlKind> = [CLI_POSTGRES, "fastify-bare-pg", CLI_PGLITE, "fastify-bare-pglite"]
export const isSqlKind = (kind: string): kind is SqlKind => SQL_KINDS.some((sql) => sql === kind)

/** Every server the HTTP sections can measure. */
export type BenchServerKind = ServerKind | CliKind | typeof CLI_PGLITE | typeof CLI_POSTGRES

export interface ServerReady {
  readonly type: "ready"
  readonly url: string
}

export interface MicroResult {
  readonly name: string
  readonly opsPerSecond: number
  readonly meanMicros: number
  readonly p99Micros: number
  readonly samples: number
}

export interface MemoryResult {
  readonly users: number
  readonly paymentMethodsPerUser: number
  readonly seedSeconds: number
  readonly before: { readonly rss: number; readonly heapUsed: number }
  readonly after: { readonly rss: number; readonly heapUsed: number }
}

/** Issue 31 (events.ts): one store's set-default with its event and without, per write. */
export interface EventWriteResult {
  readonly store: string
  readonly writes: number
  readonly withCpuMicros: number
  readonly noneCpuMicros: number
  readonly withWallMicros: number
  readonly noneWallMicros: number
  /**
   * PostgreSQL: its backend process's CPU per write, from /proc in 10 ms ticks; absent on the other stores and where it
   * cannot be read (a server on another machine).
   */
  readonly server?: { readonly withCpuMicros: number; readonly noneCpuMicros: number }
}

export interface EventsResult {
  readonly writes: ReadonlyArray<EventWriteResult>
  readonly relay: {
    readonly events: number
    readonly seconds: number
    readonly eventsPerSecond: number
    readonly cpuMicrosPerEvent: number
  }
}

/** Issue 39 (streams.ts): open event streams on one server process, what reaches them and what they hold. */
export interface StreamsResult {
  readonly streams: number
  /** Seconds from the first request to every stream answered 200 `text/event-stream`. */
  readonly openSeconds: number
  /** The server process's memory after GC, before the streams and with them all open. */
  readonly before: { readonly rss: number; readonly heapUsed: number }
  readonly open: { readonly rss: number; readonly heapUsed: number }
  /** One user's change, `samples` times one after the other: from the write sent to its stream receiving it, in ms. */
  readonly oneUser: { readonly samples: number; readonly p50Millis: number; readonly maxMillis: number }
  /** A change per user (`streams` writes, `concurrency` at once): every stream gets its user's event. */
  readonly perUser: {
    readonly writes: number
    readonly concurrency: number
    /** From the first write sent to the last stream receiving its event. */
    readonly seconds: number
    readonly eventsPerSecond: number
    /** From the last write's answer to the last stream receiving its event. */
    readonly lastWriteToLastEventMillis: number
    readonly p50Millis: number
    readonly p99Millis: number
  }
  /** The server process's CPU (user + system) over the per-user phase, per event delivered. */
  readonly serverCpuMicrosPerEvent: number | undefined
}

/** The frameworks of the stage table (stages.ts). */
export type StageFramework = CliAdapter
/** Who a stage row is: Accord, the bare framework doing the same by hand, ts-rest, or Node's own server (the floor). */
export type StageServer = "accord" | "bare" | "ts-rest" | "node"

/** One row of the stage table: a server doing every stage up to `stage`, and its CPU per request in that process. */
export interface StageResult {
  readonly framework: StageFramework | "node"
  readonly server: StageServer
  readonly stage: string
  readonly cpuMicrosPerRequest: number
}

/** The stage table as stages.ts measured it. */
export interface StagesResult {
  readonly results: ReadonlyArray<StageResult>
  readonly requestsPerRun: number
  readonly rounds: number
  readonly connections: number
}

export type ChildMessage =
  | ServerReady
  | {
      readonly type: "stages"
      readonly results: ReadonlyArray<StageResult>
      readonly requestsPerRun: number
      readonly rounds: number
      readonly connections: number
    }
  | { readonly type: "micro"; readonly results: ReadonlyArray<MicroResult> }
  | { readonly type: "memory"; readonly result: MemoryResult }
  | { readonly type: "events"; readonly result: EventsResult }
  | { readonly type: "streams"; readonly result: StreamsResult }
  /** streams-server.ts's memory after GC, asked by its parent. */
  | { readonly type: "usage"; readonly rss: number; readonly heapUsed: number }
  /** events.ts's webhook receiver, asked by its parent: the signed POSTs it answered. */
  | { readonly type: "received"; readonly count: number }
