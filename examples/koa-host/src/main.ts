import { once } from "node:events"
import type { AddressInfo } from "node:net"
import { constants } from "node:os"
import { drainOnClose } from "@accord/node/server"
import { onStopSignals } from "@accord/node/stop-signals"
import { createKoaHost } from "./app.js"
import { makeAccordRuntime } from "./runtime.js"
import { DEV_JWT_SECRET, jwtSecretFrom } from "./tokens.js"

const jwtSecret = jwtSecretFrom(process.env)
if (jwtSecret === DEV_JWT_SECRET) console.warn("koa-host: JWT_SECRET is not set, using the development secret")

const runtime = makeAccordRuntime({ jwtSecret })
const app = createKoaHost({ runtime })
app.on("error", (error: unknown) => console.error("koa-host: request failed:", error))

const server = app.listen(Number(process.env["PORT"] || 3000), process.env["HOST"] || "127.0.0.1")
// Accord's drain for any node:http server: stop accepting, answer the requests in flight with `Connection: close`,
// close each connection once idle (a keep-alive client would hold `server.close()` for the keep-alive timeout).
const drain = drainOnClose(server)
await once(server, "listening")
// The first SIGTERM/SIGINT drains, then disposes of the runtime. A terminal's Ctrl-C reaches this process and npm,
// which forwards its own copy: one within 1 s of the first is that same stop; a later one ends the process at once
// (Accord's rule, @accord/node/stop-signals). Installed before the line that says it listens, so that whoever reads
// that line may stop it.
onStopSignals({
  drain: () => void drain().then(() => runtime.dispose()),
  force: (signal) => process.exit(128 + constants.signals[signal])
})
const { address, port } = server.address() as AddressInfo
console.log(`koa-host listening on http://${address}:${port}`)
