import accord, { runtime, startDrain } from "./accord.ts"

// `bun src/bun.ts`: Accord on Bun.serve. Bun refuses a body whose declared Content-Length exceeds its own
// `maxRequestBodySize` (128 MiB by default) with a bare 413 before the handler sees it: no problem body, no
// X-Request-Id. The core reads at most its `bodyLimit` (16 KiB) and cancels the rest of the stream, so Bun's limit
// is lifted and every oversized body gets the core's 413 problem (docs/api.md, "Precise rules").
const server = Bun.serve({
  hostname: process.env["HOST"] ?? "127.0.0.1",
  port: Number(process.env["PORT"] ?? 3000),
  maxRequestBodySize: Number.MAX_SAFE_INTEGER,
  // Bun closes a connection silent for `idleTimeout` (10 s by default): longer than the events stream's heartbeat
  // (15 s by default), or an idle stream is cut between two heartbeats.
  idleTimeout: 30,
  fetch: accord.fetch
})
console.log(`listening on ${server.url.origin}`)

// Drain: the open events streams end (they would hold `stop()` for ever), `server.stop()` stops accepting and
// resolves once the requests in flight are answered (`stop(true)` would cut them); then the runtime is disposed of.
const drain = async (): Promise<void> => {
  startDrain()
  await server.stop()
  await runtime.dispose()
  process.exit(0)
}
process.on("SIGTERM", () => void drain())
process.on("SIGINT", () => void drain())
