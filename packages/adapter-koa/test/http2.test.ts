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
import { connect, createServer } from "node:http2"
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
