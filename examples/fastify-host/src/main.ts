import { constants } from "node:os"
import { drainOnClose } from "@accord/node/server"
import { onStopSignals } from "@accord/node/stop-signals"
import { createFastifyHost } from "./app.js"
import { makeAccordRuntime } from "./runtime.js"
import { makeDemoKeys } from "./tokens.js"

const databaseUrl = process.env["DATABASE_URL"] || undefined
const keys = await makeDemoKeys()
const runtime = await makeAccordRuntime({
  keys,
  databaseUrl,
  databaseSchema: process.env["DATABASE_SCHEMA"] || undefined
})
const app = await createFastifyHost({ runtime, keys, logger: { level: process.env["LOG_LEVEL"] || "warn" } })

// Accord's drain for any node:http server: stop accepting, answer the requests in flight with `Connection: close`,
// close each connection once idle (Fastify keeps an idle keep-alive connection, and so its close, for 72 s).
const drain = drainOnClose(app.server)
const url = await app.listen({ host: process.env["HOST"] || "127.0.0.1", port: Number(process.env["PORT"] || 3000) })
// The first SIGTERM/SIGINT drains, then closes the app (which disposes of the runtime). A terminal's Ctrl-C reaches
// this process and npm, which forwards its own copy: one within 1 s of the first is that same stop; a later one ends
// the process at once (Accord's rule, @accord/node/stop-signals). Installed before the line that says it listens, so
// that whoever reads that line may stop it.
onStopSignals({
  drain: () => void drain().then(() => app.close()),
  force: (signal) => process.exit(128 + constants.signals[signal])
})
console.log(
  `fastify-host listening on ${url} (store: ${databaseUrl === undefined ? "PGlite in memory" : "PostgreSQL"})`
)
