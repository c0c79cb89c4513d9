/** What the bench and its child processes say to each other over IPC. */

export const SERVER_KINDS = ["fastify-accord", "fastify-bare", "koa-accord", "koa-bare"] as const
export type ServerKind = (typeof SERVER_KINDS)[number]

export const isServerKind = (value: string | undefined): value is ServerKind => SERVER_KINDS.some((kind) => kind === value)

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
