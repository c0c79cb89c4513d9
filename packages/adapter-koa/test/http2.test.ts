import { accordRouter } from "@accord/adapter-koa"
import { Seed } from "@accord/core"
import { http2Send, paths } from "@accord/conformance"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node"
import { makeMemoryStore } from "@accord/store-memory"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Layer, ManagedRuntime, Schema } from "effect"
import Koa from "koa"
import { once } from "node:events"
import { connect, createServer } from "node:http2"
import type { AddressInfo } from "node:net"

// The Koa router on a host's cleartext `node:http2` server (docs/embedding.md, "HTTP/2"; docs/SECURITY.md, item 28):
// the body rules only, since the Fastify plugin runs the shared audits over HTTP/2.

const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "h2_user", token: "h2-token" }] })
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive(testScryptCost)))
const app = new Koa()
app.use(accordRouter({ runtime, prefix: "/api" }).routes())
const server = createServer(app.callback())
server.listen(0, "127.0.0.1")
await once(server, "listening")
const session = connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)
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
