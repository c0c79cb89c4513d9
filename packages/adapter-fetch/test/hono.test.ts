import { makeFetchHandler } from "@accord/adapter-fetch"
import { send } from "@accord/conformance"
import { listen } from "@accord/node/server"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { getRequestListener } from "@hono/node-server"
import { Hono } from "hono"
import { createServer } from "node:http"
import { app, runtime } from "./examples/hono-app.js"

const problemType = "application/problem+json; charset=utf-8"
const auth = { Authorization: "Bearer dev-token-u1" }
/** `app.request` builds a Request from its init, with no Content-Length: a body counts once it declares one. */
const json = (body: string) => ({ ...auth, "Content-Type": "application/json", "Content-Length": String(body.length) })
const preferences = "/api/users/v1/preferences/language/"

afterAll(() => runtime.dispose())

describe("Accord inside a Hono app (the README example), called as Bun, Deno or Workers call it", () => {
  it("the host's routes keep their own body parsing, errors and 404", async () => {
    const order = await app.request("/orders", { method: "POST", body: '{"sku":"A-1"}' })
    expect(await order.json()).toEqual({ received: { sku: "A-1" } })
    const broken = await app.request("/orders", { method: "POST", body: "{bad" })
    expect(broken.status).toBe(500)
    expect(await broken.json()).toMatchObject({ host_error: expect.any(String) })
    for (const path of ["/elsewhere", "/API/health", "/apis"]) {
      const response = await app.request(path)
      expect(response.status, path).toBe(404)
      expect(await response.json(), path).toEqual({ host_error: "no such page" })
    }
  })

  it("Accord's routes answer under the prefix, with their bodies", async () => {
    const health = await app.request("/api/health")
    expect(health.status).toBe(200)
    expect(await health.text()).toBe('{"status":"ok"}')
    const body = '{"language":"EN-us"}'
    const updated = await app.request(preferences, { method: "PUT", headers: json(body), body })
    expect(updated.status).toBe(200)
    expect(await updated.json()).toMatchObject({ language: "en-US" })
    const entry = '{"email":"ada@Example.COM","password":"correct horse"}'
    const created = await app.request("/api/plans/v1/subscription-plans/public/", {
      method: "POST",
      headers: json(entry),
      body: entry
    })
    expect(created.status).toBe(201)
    expect(await created.text()).toBe('{"email":"ada@example.com","password":"********"}')
  })

  it("Accord's errors are its own problems, never the host's format, /api itself included", async () => {
    const cases = [
      { path: preferences, init: { method: "PUT", headers: json("{bad"), body: "{bad" }, code: "invalid_json" },
      {
        path: preferences,
        init: { method: "PUT", headers: { ...json("{}"), "Content-Type": "text/plain" }, body: "{}" },
        code: "unsupported_media_type"
      },
      { path: preferences, init: { method: "PUT", body: "{}" }, code: "unauthenticated" },
      { path: "/api/nope", init: {}, code: "not_found" },
      { path: "/api", init: {}, code: "not_found" },
      { path: "/api/health", init: { method: "DELETE" }, code: "method_not_allowed" }
    ]
    for (const { path, init, code } of cases) {
      const response = await app.request(path, init)
      expect(response.headers.get("content-type"), `${init.method ?? "GET"} ${path}`).toBe(problemType)
      expect(await response.json()).toMatchObject({ code })
    }
  })

  it("HEAD and OPTIONS: the core's headers and no body", async () => {
    const head = await app.request("/api/openapi.json", { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(head.headers.get("content-type")).toBe("application/json; charset=utf-8")
    expect(head.body).toBeNull()
    const options = await app.request(preferences, { method: "OPTIONS" })
    expect(options.status).toBe(204)
    expect(options.headers.get("allow")).toBe("GET, HEAD, OPTIONS, PUT")
    expect(options.body).toBeNull()
  })
})

describe("mounting choices in Hono", () => {
  const accord = makeFetchHandler({ runtime, prefix: "/api" })

  it("app.mount cuts the prefix off the path: the core then finds no route (hence app.all with c.req.raw)", async () => {
    const mounted = new Hono()
    mounted.mount("/api", accord)
    const response = await mounted.request("/api/health")
    expect(response.status).toBe(404)
    expect(await response.json()).toMatchObject({ code: "not_found" })
  })

  it("a host middleware that reads the body first: 400 invalid_json, the body could not be read", async () => {
    const greedy = new Hono()
    greedy.use(async (c, next) => {
      await c.req.text()
      await next()
    })
    greedy.all("/api/*", (c) => accord(c.req.raw))
    const body = '{"language":"fr"}'
    const response = await greedy.request(preferences, { method: "PUT", headers: json(body), body })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ code: "invalid_json", detail: "The body could not be read." })
  })
})

describe("the Hono app on Node, through @hono/node-server", () => {
  it("answers Accord's routes and the host's over a socket", async () => {
    const server = createServer(getRequestListener(app.fetch, { overrideGlobalObjects: false }))
    const url = await listen(server, "127.0.0.1", 0)
    try {
      const updated = await send(url, {
        method: "PUT",
        path: preferences,
        headers: { ...auth, "Content-Type": "application/json" },
        body: '{"timezone":60}'
      })
      expect(updated.status).toBe(200)
      expect(JSON.parse(updated.body.toString())).toMatchObject({ timezone: 60 })
      const refused = await send(url, {
        method: "PUT",
        path: preferences,
        headers: { ...auth, "Content-Type": "application/json" },
        chunks: ["{", " ".repeat(20_000), "}"]
      })
      expect(refused.status).toBe(413)
      expect(JSON.parse(refused.body.toString())).toMatchObject({ code: "payload_too_large" })
      const order = await send(url, { method: "POST", path: "/orders", body: '{"sku":"B-2"}' })
      expect(JSON.parse(order.body.toString())).toEqual({ received: { sku: "B-2" } })
    } finally {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  })
})
