import { createServer } from "node:net"
import type { ServerReady } from "./protocol.js"

/**
 * The other end of machine.ts's round-trip calibration, in its own process: a TCP server on loopback that sends back
 * whatever it receives. Started by the bench with fork(); reports its address over IPC, exits when the bench goes.
 */

const server = createServer((socket) => {
  socket.setNoDelay(true)
  socket.on("data", (chunk) => socket.write(chunk))
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  if (address === null || typeof address === "string" || process.send === undefined)
    throw new Error("echo.js is started by the bench with fork()")
  const ready: ServerReady = { type: "ready", url: `tcp://127.0.0.1:${address.port}` }
  process.send(ready)
})
process.once("disconnect", () => process.exit(0))
process.once("SIGTERM", () => process.exit(0))
