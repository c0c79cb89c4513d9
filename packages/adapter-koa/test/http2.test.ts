import { accordRouter } from "@accord/adapter-koa"
import { Seed } from "@accord/domain"
import { http2Send, http2SendFields, paths } from "@accord/conformance"
import { auditTarget, httpAudits } from "@accord/conformance/audits"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Layer, ManagedRuntime, Schema } from "effect"
import Koa from "koa"
import { once } from "node:events"
import {
  connect,
  constants,
  createServer,
  type ClientHttp2Session,
  type IncomingHttpHeaders,
  type IncomingHttpStatusHeader
} from "node:http2"
import type { AddressInfo } from "node:net"

// The Koa router on a host's cleartext `node:http2` server (docs/embedding.md, "HTTP/2"; docs/SECURITY.md, item 28):
// the body rules and the CORS audits (items 37 and 38); the Fastify plugin runs all the shared audits over HTTP/2.

const seed = Schema.decodeUnknownSync(Seed)({
  users: [
    { id: "h2_user", token: "h2-token" },
    { id: "h2_other", token: "h2-other-token" }
  ]
})
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive(testScryptCost)))
const app = new Koa()
app.use(accordRouter({ runtime, prefix: "/api", corsOrigins: "*" }).routes())
const server = createServer(app.callback())
server.listen(0, "127.0.0.1")
await once(server, "listening")
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
const session = connect(url)
const send = http2Send(session)

afterAll(async () => {
  session.close()
  await new Promise((resolve) => server.close(resolve))
  await runtime.dispose()
})

const headers = { authorization: "Bearer h2-token", "content-type": "application/json" }

describe("accordRouter on node:http2 (h2c)", () => {
  it("reads a body that comes without Content-Length, and a stream the headers ended has none", async () => {
    const put = await send({ method: "PUT", path: paths.preferences, headers, chunks: ['{"language":', '"fr"}'] })
    expect(put.status).toBe(200)
    expect(JSON.parse(put.body.toString())).toMatchObject({ language: "fr" })
    const none = await send({ method: "PUT", path: paths.preferences, headers })
    expect(none.status).toBe(400)
    expect(JSON.parse(none.body.toString())).toMatchObject({ code: "invalid_json" })
    const empty = await send({ method: "PUT", path: paths.preferences, headers, body: "" })
    expect(empty.status).toBe(400)
  })
})

describe("accordRouter on node:http2 (h2c) with CORS on", () => {
  const origin = "https://app.example"
  const target = auditTarget({
    url: `${url}/api`,
    userToken: "h2-token",
    otherUserToken: "h2-other-token",
    clientToken: "no-client",
    userPaymentMethods: ["unused_1", "unused_2"],
    otherUserPaymentMethods: ["unused_3"],
    send,
    exchange: false,
    corsOrigin: origin
  })
  // The ones a session can send: two Origin lines are HTTP/1.1 bytes (the test below sends two fields instead).
  for (const audit of httpAudits.filter((audit) => audit.needs.includes("cors") && !audit.needs.includes("wire")))
    it(`${audit.id}: ${audit.title}`, () => audit.run(target))

  // Two Origin fields, which Node's server joins into one value ("a, b") as HTTP/1.1's does two lines.
  it("two Origin fields get no CORS headers, and vary on Origin (docs/SECURITY.md, item 38)", async () => {
    const sendFields = http2SendFields(session)
    expect((await sendFields("GET", paths.health, { origin })).headers["access-control-allow-origin"]).toBe(origin)
    for (const origins of [
      [origin, origin],
      [origin, "https://other.example"]
    ]) {
      const res = await sendFields("GET", paths.health, { origin: origins })
      expect(res.status).toBe(200)
      expect(res.headers["access-control-allow-origin"]).toBeUndefined()
      expect(res.headers["vary"]).toBe("Origin")
    }
  })
})

describe("the events stream over h2c (docs/api.md, Events)", () => {
  const EVENTS = "/api/users/v1/events/"

  /** A Koa app of its own: a drain the test starts, and the streams it opens and closes. */
  const streaming = async () => {
    let drain = (): void => {}
    const drainStarted = new Promise<void>((resolve) => (drain = resolve))
    const opened: Array<number> = []
    const internalErrors: Array<unknown> = []
    const koa = new Koa()
    koa.use(
      accordRouter({
        runtime,
        prefix: "/api",
        drainStarted,
        eventStreams: { onOpenChange: (delta) => opened.push(delta) },
        onInternalError: (_requestId, cause) => internalErrors.push(cause)
      }).routes()
    )
    const h2 = createServer(koa.callback())
    const errors: Array<unknown> = []
    h2.on("sessionError", (error) => errors.push(error))
    h2.on("streamError", (error) => errors.push(error))
    h2.listen(0, "127.0.0.1")
    await once(h2, "listening")
    const client = connect(`http://127.0.0.1:${(h2.address() as AddressInfo).port}`)
    return {
      client,
      drain,
      opened,
      errors: () => [...errors, ...internalErrors],
      close: async () => {
        client.close()
        await new Promise((resolve) => h2.close(resolve))
      }
    }
  }

  /** Opens the stream on `client`: its head, and its body's text as it arrives, chunk by chunk. */
  const open = async (client: ClientHttp2Session) => {
    const stream = client.request({ ":path": EVENTS, accept: "text/event-stream", authorization: "Bearer h2-token" })
    const head = await new Promise<IncomingHttpHeaders & IncomingHttpStatusHeader>((resolve, reject) => {
      stream.once("response", resolve)
      stream.once("error", reject)
    })
    let text = ""
    const waiters: Array<() => void> = []
    stream.setEncoding("utf8").on("data", (chunk: string) => {
      text += chunk
      for (const wake of waiters.splice(0)) wake()
    })
    const ended = new Promise<void>((resolve, reject) => {
      stream.once("end", resolve)
      stream.once("error", reject)
    })
    /** Resolves once the text read so far holds `part` (the test's timeout bounds the wait). */
    const until = async (part: string): Promise<string> => {
      while (!text.includes(part)) await new Promise<void>((resolve) => waiters.push(resolve))
      return text
    }
    return { stream, head, until, ended, text: () => text }
  }

  it("the head, retry, and a live event flushed while the stream stays open; ended by the drain without error", async () => {
    const host = await streaming()
    try {
      const { stream, head, until, ended } = await open(host.client)
      expect(head[":status"]).toBe(200)
      expect(head["content-type"]).toBe("text/event-stream")
      expect(head["cache-control"]).toBe("no-store")
      expect(head["x-accel-buffering"]).toBe("no")
      expect(head["content-length"]).toBeUndefined()
      expect(head["x-request-id"]).toMatch(/\S/)
      expect(await until("\n\n")).toMatch(/^retry: 2000\n\n/)
      // A change on another stream of the same session: its event arrives while this stream stays open.
      const put = await http2Send(host.client)({
        method: "PUT",
        path: paths.preferences,
        headers,
        body: '{"timezone":135}'
      })
      expect(put.status).toBe(200)
      const live = await until('"new":135')
      const block = live.split("\n\n").find((part) => part.includes('"new":135')) ?? ""
      expect(block).toMatch(/^id: [0-9a-f-]{36}\ndata: \{.*"type":"preferences\.updated".*\}$/)
      expect(stream.closed).toBe(false)
      host.drain()
      await ended
      await new Promise((resolve) => stream.once("close", resolve))
      expect(stream.rstCode).toBe(constants.NGHTTP2_NO_ERROR)
      expect(host.opened).toEqual([1, -1])
      expect(host.errors()).toEqual([])
    } finally {
      await host.close()
    }
  })

  it("the client's cancel ends the stream on the server, without error; the session goes on", async () => {
    const host = await streaming()
    try {
      const { stream, until } = await open(host.client)
      await until("retry: 2000\n\n")
      expect(host.opened).toEqual([1])
      stream.close(constants.NGHTTP2_CANCEL)
      while (host.opened.length < 2) await new Promise((resolve) => setTimeout(resolve, 5))
      expect(host.opened).toEqual([1, -1])
      const health = await http2Send(host.client)({ method: "GET", path: paths.health })
      expect(health.status).toBe(200)
      expect(host.errors()).toEqual([])
    } finally {
      await host.close()
    }
  })
})
