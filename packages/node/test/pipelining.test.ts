import { createServer, type Server } from "node:http"
import { connect } from "node:net"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { guardServer, listen, MAX_UNANSWERED_PER_CONNECTION } from "@accord/node/server"

// docs/SECURITY.md, item 18: past the unanswered limit nothing more of a connection's read is parsed or dispatched.
describe("guardServer and a client that pipelines without reading", () => {
  let server: Server | undefined
  afterEach(async () => {
    server?.closeAllConnections()
    await new Promise((resolve) => server?.close(resolve))
  })

  it(`dispatches ${MAX_UNANSWERED_PER_CONNECTION} unanswered requests, closes the connection, and hands nothing past them to upgrade listeners`, async () => {
    let dispatched = 0
    let upgrades = 0
    const guarded = createServer()
    server = guarded
    const { guard, clientError } = guardServer(guarded, {})
    // A handler that never answers: every request stays unanswered.
    guarded.on(
      "request",
      guard(() => void dispatched++)
    )
    guarded.on("clientError", clientError)
    guarded.on("upgrade", (_request, socket) => {
      upgrades++
      socket.destroy()
    })
    const url = new URL(await listen(guarded, "127.0.0.1", 0))

    const get = "GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n"
    const upgrade = "GET /socket HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n"
    const closed = await new Promise<boolean>((resolve) => {
      const socket = connect(Number(url.port), url.hostname, () =>
        socket.write(get.repeat(MAX_UNANSWERED_PER_CONNECTION) + upgrade + get.repeat(2000))
      )
      socket.on("error", () => undefined)
      socket.on("close", () => resolve(true))
      socket.resume()
    })

    expect(closed).toBe(true)
    expect(dispatched).toBe(MAX_UNANSWERED_PER_CONNECTION)
    expect(upgrades).toBe(0)
  })
})
