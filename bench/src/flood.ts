import { connect, type Socket } from "node:net"

/**
 * Another client's wait while `connections` connections each pipeline `requestsPerConnection` `GET /api/health`
 * and never read their answers (docs/SECURITY.md, "Clients that never read their answers"). A figure for
 * `npm run soak`: the test suite asserts what does not depend on the machine's speed (memory, every answer, a drain
 * that ends by itself), and this is where the wait is measured.
 */
export interface FloodWaits {
  readonly samples: number
  /** Health answers that were not 200 (there should be none). */
  readonly notOk: number
  readonly p50Ms: number
  readonly maxMs: number
  /** The same client's wait on the same server before the flood, for scale. */
  readonly idleP50Ms: number
}

export const FLOOD_CONNECTIONS = 100
export const FLOOD_REQUESTS_PER_CONNECTION = 5000

const openNonReader = (url: string, bytes: string): Socket => {
  const { hostname, port } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port) }, () => socket.write(bytes))
  socket.pause()
  socket.on("error", () => undefined)
  return socket
}

const timedHealth = async (url: string): Promise<{ readonly status: number; readonly ms: number }> => {
  const started = performance.now()
  const response = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(30_000) })
  await response.text()
  return { status: response.status, ms: performance.now() - started }
}

const quantile = (values: ReadonlyArray<number>, q: number): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN
}

/** Measures for `floodMs`, then destroys the flood's connections. */
export const measureFloodWaits = async (url: string, floodMs = 3000): Promise<FloodWaits> => {
  const idle: Array<number> = []
  for (let index = 0; index < 20; index++) idle.push((await timedHealth(url)).ms)
  const pipelined = "GET /api/health HTTP/1.1\r\nHost: flood\r\n\r\n".repeat(FLOOD_REQUESTS_PER_CONNECTION)
  const flood = Array.from({ length: FLOOD_CONNECTIONS }, () => openNonReader(url, pipelined))
  const waits: Array<{ readonly status: number; readonly ms: number }> = []
  try {
    for (const until = performance.now() + floodMs; performance.now() < until;) {
      waits.push(await timedHealth(url))
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  } finally {
    for (const socket of flood) socket.destroy()
  }
  const ms = waits.map((wait) => wait.ms)
  return {
    samples: waits.length,
    notOk: waits.filter((wait) => wait.status !== 200).length,
    p50Ms: quantile(ms, 0.5),
    maxMs: Math.max(...ms),
    idleP50Ms: quantile(idle, 0.5)
  }
}
