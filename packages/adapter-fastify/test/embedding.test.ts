import { accordPlugin as plugin } from "@accord/adapter-fastify"
import { MemoryStoreLive } from "@accord/store-memory"
import { ScryptPasswordHasherLive as hasher, testScryptCost } from "@accord/node/scrypt"
import { runEmbeddingSuite } from "@accord/test-support"
import { describe, expect, it } from "@effect/vitest"
import { Layer as L, ManagedRuntime as MR } from "effect"
import FastifyHost from "fastify"

// The README example listens on PORT (default 3000); here on a free port.
process.env.PORT = "0"

// README:start
import Fastify, { type FastifyError } from "fastify"
import { Layer, ManagedRuntime, Schema } from "effect"
import { Seed } from "@accord/domain"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { accordPlugin } from "@accord/adapter-fastify"

// The runtime holds the store and the password hasher: the host builds it once and disposes of it on close.
const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_1", token: "dev-token-u1" }] })
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive()))

const app = Fastify()
// The host's own error format, JSON parsing and routes stay as they are...
app.setErrorHandler((error: FastifyError, _request, reply) => {
  reply.code(error.statusCode ?? 500).send({ host_error: error.message })
})
app.post("/orders", async (request) => ({ received: request.body }))

// ...and Accord answers under /api, encapsulated: its parsing and its problem+json errors apply only there.
await app.register(accordPlugin, { prefix: "/api", runtime })
app.addHook("onClose", () => runtime.dispose())

await app.listen({ host: "127.0.0.1", port: Number(process.env.PORT ?? 3000) })
// README:end

const address = app.server.address()
const url = typeof address === "object" && address !== null ? `http://127.0.0.1:${address.port}` : ""

runEmbeddingSuite({
  host: "Fastify",
  url,
  close: () => app.close(),
  example: {
    source: new URL("./embedding.test.ts", import.meta.url),
    readme: new URL("../README.md", import.meta.url)
  },
  // Fastify parses text/plain itself before any plugin's parser, and answers a malformed escape in the path with its
  // own 400.
  otherMediaType: "nonsense",
  hostRefusesMalformedPaths: true
})

describe("errors from the host's own hooks", () => {
  it("reach the host's error handler, also on Accord's routes", async () => {
    const runtime = MR.make(L.mergeAll(MemoryStoreLive, hasher(testScryptCost)))
    const host = FastifyHost()
    host.setErrorHandler((error: FastifyError, _request, reply) => {
      reply.code(error.statusCode ?? 500).send({ host_error: error.message })
    })
    // A host-wide hook (e.g. an API gateway check) that refuses some requests before any route runs.
    host.addHook("onRequest", async (request) => {
      if (request.headers["x-blocked"] !== undefined)
        throw Object.assign(new Error("blocked by the host"), { statusCode: 429 })
    })
    await host.register(plugin, { prefix: "/api", runtime })
    try {
      const blocked = await host.inject({ method: "GET", url: "/api/health", headers: { "x-blocked": "1" } })
      expect(blocked.statusCode).toBe(429)
      expect(blocked.json()).toEqual({ host_error: "blocked by the host" })
      expect((await host.inject({ method: "GET", url: "/api/health" })).statusCode).toBe(200)
    } finally {
      await host.close()
      await runtime.dispose()
    }
  })
})
