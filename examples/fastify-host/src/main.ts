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

const url = await app.listen({ host: process.env["HOST"] || "127.0.0.1", port: Number(process.env["PORT"] || 3000) })
console.log(
  `fastify-host listening on ${url} (store: ${databaseUrl === undefined ? "PGlite in memory" : "PostgreSQL"})`
)

const stop = () => void app.close()
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
