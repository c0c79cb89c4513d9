/** What the bench and its child processes say to each other over IPC. */

/**
 * The benchmarked servers: Accord's adapters, the bare baselines doing the same work by hand, and two peers a user
 * comparing contract-first libraries would pick instead (ts-rest on Fastify, effect's HttpApi on Node's HTTP server).
 */
export const SERVER_KINDS = [
  "fastify-accord",
  "fastify-bare",
  "koa-accord",
  "koa-bare",
  "fastify-tsrest",
  "effect-httpapi"
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

export type ChildMessage =
  | ServerReady
  | { readonly type: "micro"; readonly results: ReadonlyArray<MicroResult> }
  | { readonly type: "memory"; readonly result: MemoryResult }
