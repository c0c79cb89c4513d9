import type { RunningServer } from "@accord/node/server"
import { startExpressServer } from "@accord/adapter-express"
import { startFastifyServer } from "@accord/adapter-fastify"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { startKoaServer } from "@accord/adapter-koa"
import { paths, refusesConnections, send } from "@accord/conformance"
import { startWith, type StartAdapter } from "@accord/test-support"
import { describe, expect, it } from "@effect/vitest"
import { connect, type Socket } from "node:net"

const seed = {
  users: [{ id: "drain_user", token: "drain-token" }],
  payment_methods: [{ id: "pm_drain", user_id: "drain_user" }]
}

/**
 * A raw client connection that records what arrives and when the server closes it. It is accepted before it is
 * returned (one health exchange, then forgotten): a connection still in the listener's queue when a drain begins
 * would be refused, however briefly the test waited, on a busy machine.
 */
const open = async (baseUrl: string) => {
  const url = new URL(baseUrl)
  const socket: Socket = connect(Number(url.port), url.hostname)
  let received = ""
  const closed = new Promise<void>((resolve) => socket.on("close", () => resolve()))
  socket.on("data", (data) => (received += data.toString("latin1")))
  socket.on("error", () => undefined)
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
  /** Resolves once `pattern` shows up in what the server sent. */
  const waitFor = (pattern: RegExp): Promise<string> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (pattern.test(received)) {
          socket.off("data", check)
          resolve(received)
        }
      }
      socket.on("data", check)
      check()
    })
  socket.write("GET /api/health HTTP/1.1\r\nHost: drain\r\n\r\n")
  await waitFor(/\{"status":"ok"\}$/)
  received = ""
  return { socket, closed, waitFor, received: () => received }
}

const setDefault =
  "PUT /api/payments/v1/payment-methods/pm_drain/ HTTP/1.1\r\nHost: drain\r\nAuthorization: Bearer drain-token\r\n"

describe.each<readonly [string, StartAdapter]>([
  ["koa", startKoaServer],
  ["fastify", startFastifyServer],
  ["express", startExpressServer],
  ["fetch", startFetchServer]
])("drain on close: %s", (_name, start) => {
  // A drain limit far beyond the test timeout: closing in time proves the drain, not the deadline, ended things.
  const startPatient = (): Promise<RunningServer> => startWith(start, { drainTimeoutMs: 120_000 })(seed)

  it("answers requests on accepted connections (half-sent, body pending), closes idle ones, refuses new ones", async () => {
    const server = await startPatient()
    const idle = await open(server.url)
    idle.socket.write("GET /api/health HTTP/1.1\r\nHost: drain\r\n\r\n")
    await idle.waitFor(/\{"status":"ok"\}$/)
    const bodyPending = await open(server.url)
    bodyPending.socket.write(`${setDefault}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n`)
    const halfSent = await open(server.url)
    halfSent.socket.write("GET /api/health HTTP/1.1\r\nHo")

    const closing = server.close()
    await idle.closed
    expect(await refusesConnections(server.url)).toBe(true)

    bodyPending.socket.write("{}")
    halfSent.socket.write("st: drain\r\n\r\n")
    const answered = await bodyPending.waitFor(/"is_default":true/)
    expect(answered).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    // Told not to reuse the connection, then closed by the server.
    expect(answered).toMatch(/^Connection: close\r\n/m)
    expect(await halfSent.waitFor(/\{"status":"ok"\}$/)).toMatch(/^HTTP\/1\.1 200 OK\r\n[\s\S]*^Connection: close\r\n/m)
    await Promise.all([bodyPending.closed, halfSent.closed])
    await closing
  })

  it("readiness answers 503 unavailable during the drain, while liveness and health stay 200 (docs/api.md, Probes)", async () => {
    const server = await startPatient()
    expect((await send(server.url, { method: "GET", path: paths.ready })).status).toBe(200)
    // Requests begun before the drain and finished during it: the only ones a draining server still reads.
    const halfSent = async (path: string) => {
      const connection = await open(server.url)
      connection.socket.write(`GET ${path} HTTP/1.1\r\nHo`)
      return connection
    }
    const [ready, live, health] = await Promise.all([paths.ready, paths.live, paths.health].map(halfSent))

    const closing = server.close()
    for (const connection of [ready, live, health]) connection?.socket.write("st: drain\r\n\r\n")
    const notReady = await ready?.waitFor(/\}$/)
    expect(notReady).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/)
    expect(notReady).toMatch(/^content-type: application\/problem\+json; charset=utf-8\r\n/im)
    expect(notReady).toMatch(/^retry-after: 1\r\n/im)
    expect(notReady).toMatch(/^Connection: close\r\n/m)
    expect(JSON.parse(notReady?.slice(notReady.indexOf("\r\n\r\n") + 4) ?? "")).toEqual({
      type: "about:blank",
      title: "Service Unavailable",
      status: 503,
      detail: "The service is shutting down and takes no new requests; retry later.",
      code: "unavailable"
    })
    for (const connection of [live, health])
      expect(await connection?.waitFor(/\{"status":"ok"\}$/)).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    await closing
  })

  it("readiness also follows a host's own isDraining hook", async () => {
    let draining = false
    const server = await startWith(start, { isDraining: () => draining })(seed)
    try {
      expect((await send(server.url, { method: "GET", path: paths.ready })).status).toBe(200)
      draining = true
      expect((await send(server.url, { method: "GET", path: paths.ready })).status).toBe(503)
      expect((await send(server.url, { method: "GET", path: paths.live })).status).toBe(200)
    } finally {
      await server.close()
    }
  })

  // docs/SECURITY.md, item 29: requests the kernel holds for a connection Node has not read yet are answered too,
  // each pipelined one, with `Connection: close` on the last only (a close on an earlier one would drop the rest).
  it("answers pipelined requests still unread when the drain begins, then closes (Connection: close on the last)", async () => {
    const server = await startPatient()
    const connections = await Promise.all([open(server.url), open(server.url), open(server.url)])
    const pipelined = "GET /api/health HTTP/1.1\r\nHost: drain\r\n\r\n".repeat(16)
    // Written and the drain begun in one turn of the event loop: the server has not read a byte of them yet.
    for (const connection of connections) connection.socket.write(pipelined)
    const closing = server.close()
    for (const connection of connections) {
      await connection.closed
      const answers = connection.received().split(/(?=HTTP\/1\.1 )/)
      expect(answers.map((answer) => answer.slice(0, 15))).toEqual(Array(16).fill("HTTP/1.1 200 OK"))
      expect(answers.map((answer) => /^Connection: close\r$/im.test(answer))).toEqual([...Array(15).fill(false), true])
    }
    await closing
  })

  it("at the drain limit closes what is still unanswered", async () => {
    const server = await startWith(start, { drainTimeoutMs: 200 })(seed)
    const stuck = await open(server.url)
    // The body never comes.
    stuck.socket.write(`${setDefault}Content-Type: application/json\r\nContent-Length: 2\r\n\r\n`)
    await server.close()
    await stuck.closed
    expect(stuck.received()).toBe("")
  })
})
