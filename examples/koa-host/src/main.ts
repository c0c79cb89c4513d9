import { once } from "node:events"
import type { AddressInfo } from "node:net"
import { createKoaHost } from "./app.js"
import { makeAccordRuntime } from "./runtime.js"
import { DEV_JWT_SECRET, jwtSecretFrom } from "./tokens.js"

const jwtSecret = jwtSecretFrom(process.env)
if (jwtSecret === DEV_JWT_SECRET) console.warn("koa-host: JWT_SECRET is not set, using the development secret")

const runtime = makeAccordRuntime({ jwtSecret })
const app = createKoaHost({ runtime })
app.on("error", (error: unknown) => console.error("koa-host: request failed:", error))

const server = app.listen(Number(process.env["PORT"] || 3000), process.env["HOST"] || "127.0.0.1")
await once(server, "listening")
const { address, port } = server.address() as AddressInfo
console.log(`koa-host listening on http://${address}:${port}`)

const stop = () => {
  server.close(() => void runtime.dispose())
  server.closeIdleConnections()
}
process.once("SIGTERM", stop)
process.once("SIGINT", stop)
