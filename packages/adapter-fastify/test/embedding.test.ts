import { accordPlugin as plugin } from "@accord/adapter-fastify"
import { send } from "@accord/conformance"
import { MemoryStoreLive } from "@accord/store-memory"
import { ScryptPasswordHasherLive as hasher, testScryptCost } from "@accord/node/scrypt"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Layer as L, ManagedRuntime as MR } from "effect"
import FastifyHost from "fastify"
import { readFileSync } from "node:fs"

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
const auth = { Authorization: "Bearer dev-token-u1" }
const json = { ...auth, "Content-Type": "application/json" }
const problemType = "application/problem+json; charset=utf-8"

afterAll(async () => {
  await app.close()
})

describe("Accord inside a host Fastify app (the README example)", () => {
  it("the host's route keeps Fastify's JSON parser", async () => {
    const response = await send(url, {
      method: "POST",
      path: "/orders",
      headers: { "Content-Type": "application/json" },
      body: '{"sku":"A-1"}'
    })
    expect(response.status).toBe(200)
    expect(JSON.parse(response.body.toString())).toEqual({ received: { sku: "A-1" } })
  })

  it("the host's error handler still formats the host's errors", async () => {
    const response = await send(url, {
      method: "POST",
      path: "/orders",
      headers: { "Content-Type": "application/json" },
      body: "{bad"
    })
    expect(response.status).toBe(400)
    expect(JSON.parse(response.body.toString())).toHaveProperty("host_error")
  })

  it("paths outside the prefix keep the host's 404", async () => {
    const response = await send(url, { method: "GET", path: "/elsewhere" })
    expect(response.status).toBe(404)
    expect(response.headers["content-type"]).not.toBe(problemType)
  })

  it("Accord's routes answer under the prefix", async () => {
    expect((await send(url, { method: "GET", path: "/api/health" })).status).toBe(200)
    const updated = await send(url, {
      method: "PUT",
      path: "/api/users/v1/preferences/language/",
      headers: json,
      body: '{"language":"EN-us"}'
    })
    expect(updated.status).toBe(200)
    expect(JSON.parse(updated.body.toString())).toMatchObject({ language: "en-US" })
    const created = await send(url, {
      method: "POST",
      path: "/api/plans/v1/subscription-plans/public/",
      headers: json,
      body: '{"email":"ada@Example.COM","password":"correct horse"}'
    })
    expect(created.status).toBe(201)
    expect(created.body.toString()).toBe('{"email":"ada@example.com","password":"********"}')
  })

  it("Accord's errors are its own problems, never the host's format", async () => {
    const cases = [
      {
        request: { method: "PUT", path: "/api/users/v1/preferences/language/", headers: json, body: "{bad" },
        code: "invalid_json"
      },
      {
        request: {
          method: "PUT",
          path: "/api/users/v1/preferences/language/",
          headers: { ...auth, "Content-Type": "nonsense" },
          body: "{}"
        },
        code: "unsupported_media_type"
      },
      {
        request: {
          method: "PUT",
          path: "/api/users/v1/preferences/language/",
          headers: { "Content-Type": "nonsense" },
          body: "{}"
        },
        code: "unauthenticated"
      },
      { request: { method: "GET", path: "/api/nope" }, code: "not_found" },
      { request: { method: "DELETE", path: "/api/health" }, code: "method_not_allowed" }
    ]
    for (const { request, code } of cases) {
      const response = await send(url, request)
      expect(response.headers["content-type"], `${request.method} ${request.path}`).toBe(problemType)
      expect(JSON.parse(response.body.toString())).toMatchObject({ code })
    }
  })

  it("README.md shows exactly this example", () => {
    const source = readFileSync(new URL("./embedding.test.ts", import.meta.url), "utf8")
    const example = source.slice(
      source.indexOf("// README:start\n") + "// README:start\n".length,
      source.indexOf("// README:end")
    )
    expect(readFileSync(new URL("../README.md", import.meta.url), "utf8")).toContain("```ts\n" + example + "```\n")
  })
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
