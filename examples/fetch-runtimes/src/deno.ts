import accord, { runtime, startDrain } from "./accord.ts"

// `deno run --allow-env --allow-net --allow-read src/deno.ts`: Accord on Deno.serve.

// Deno 2.9's `server.shutdown()` makes the body of every request still arriving unreadable at once ("BadResource:
// Cannot read request body as underlying resource unavailable", denoland/deno#36809), so Accord would answer those
// uploads 400 invalid_json. The host counts the requests in flight and calls shutdown() once none is left.
let inFlight = 0
let onIdle: (() => void) | undefined
const fetch = async (request: Request): Promise<Response> => {
  inFlight += 1
  try {
    return await accord.fetch(request)
  } finally {
    inFlight -= 1
    if (inFlight === 0) onIdle?.()
  }
}
const idle = (): Promise<void> =>
  new Promise((resolve) => {
    onIdle = resolve
    if (inFlight === 0) resolve()
  })

const server = Deno.serve(
  {
    hostname: Deno.env.get("HOST") ?? "127.0.0.1",
    port: Number(Deno.env.get("PORT") ?? 3000),
    onListen: ({ hostname, port }) => console.log(`listening on http://${hostname}:${port}`)
  },
  fetch
)

// Drain: the open events streams end (they would hold `shutdown()` for ever), wait (at most DRAIN_TIMEOUT_MS) for
// the requests in flight, then `server.shutdown()` stops accepting and resolves once the answers are written; then
// the runtime is disposed of.
const drainTimeoutMs = Number(Deno.env.get("DRAIN_TIMEOUT_MS") ?? 10_000)
const drain = async (): Promise<void> => {
  startDrain()
  await Promise.race([idle(), new Promise((resolve) => setTimeout(resolve, drainTimeoutMs))])
  await server.shutdown()
  await runtime.dispose()
  Deno.exit(0)
}
Deno.addSignalListener("SIGTERM", () => void drain())
Deno.addSignalListener("SIGINT", () => void drain())
