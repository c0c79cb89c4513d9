import { testScryptCost } from "@accord/node/scrypt"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { AddressInfo } from "node:net"
import type { Server } from "node:http"
import { once } from "node:events"
import { createKoaHost } from "../src/app.js"
import { makeAccordRuntime } from "../src/runtime.js"
import { DEV_JWT_SECRET, issueDemoToken } from "../src/tokens.js"

const PROBLEM = "application/problem+json; charset=utf-8"
const runtime = makeAccordRuntime({ jwtSecret: DEV_JWT_SECRET, scrypt: testScryptCost })
const app = createKoaHost({ runtime })
const hostErrors: Array<unknown> = []
app.on("error", (error: unknown) => void hostErrors.push(error))
let server: Server
let base = ""

beforeAll(async () => {
  server = app.listen(0, "127.0.0.1")
  await once(server, "listening")
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  await runtime.dispose()
})

const get = (path: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { headers })
const sendJson = (method: string, path: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method, headers: { "content-type": "application/json", ...headers }, body })
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

describe("koa-host: the host's own routes", () => {
  it("answers GET /hello", async () => {
    const response = await get("/hello?name=Ada")
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ message: "Hello, Ada!" })
  })

  it("parses JSON with its own body parser on POST /echo", async () => {
    const response = await sendJson("POST", "/echo", '{"sku":"A-1","qty":2}')
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ echo: { sku: "A-1", qty: 2 } })
  })

  it("answers malformed JSON on its own route in its own error format", async () => {
    const response = await sendJson("POST", "/echo", "{bad")
    expect(response.status).toBe(400)
    expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
    expect(await response.json()).toEqual({ error: { status: 400, message: "Bad Request" } })
  })

  it("answers an unknown path outside /api with its own 404, not Accord's", async () => {
    for (const path of ["/nope", "/apis", "/API/health"]) {
      const response = await get(path)
      expect(response.status, path).toBe(404)
      expect(response.headers.get("content-type"), path).not.toBe(PROBLEM)
      expect(await response.json(), path).toEqual({ error: { status: 404, message: `No route for GET ${path}` } })
    }
  })

  it("sends an error thrown by its own route through its own error handler", async () => {
    const response = await get("/boom")
    expect(response.status).toBe(500)
    expect(response.headers.get("content-type")).not.toBe(PROBLEM)
    expect(await response.json()).toEqual({ error: { status: 500, message: "Internal Server Error" } })
    expect(
      hostErrors.some((error) => error instanceof Error && error.message === "a bug in the host's own route")
    ).toBe(true)
  })
})

describe("koa-host: Accord under /api", () => {
  it("answers its routes with a user token", async () => {
    const token = await issueDemoToken("u_1")
    expect((await get("/api/health")).status).toBe(200)
    const list = await get("/api/payments/v1/payment-methods/", bearer(token))
    expect(list.status).toBe(200)
    expect(((await list.json()) as { data: Array<{ id: string; is_default: boolean }> }).data).toMatchObject([
      { id: "pm_bank", is_default: false },
      { id: "pm_card", is_default: true }
    ])
    const updated = await sendJson("PUT", "/api/users/v1/preferences/language/", '{"language":"pt-br"}', bearer(token))
    expect(updated.status).toBe(200)
    expect(await updated.json()).toMatchObject({ language: "pt-BR" })
  })

  it("reads its own bodies: the host's parser never touches them", async () => {
    const token = await issueDemoToken("u_2")
    const malformed = await sendJson("PUT", "/api/users/v1/preferences/language/", "{bad", bearer(token))
    expect(malformed.status).toBe(400)
    expect(malformed.headers.get("content-type")).toBe(PROBLEM)
    expect(await malformed.json()).toMatchObject({ code: "invalid_json" })
  })

  it("serves the API reference page it opted into at /api/docs, with its files", async () => {
    const page = await get("/api/docs")
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(await page.text()).toContain('<script src="docs/init.js"></script>')
    expect((await get("/api/docs/swagger-ui-bundle.js")).status).toBe(200)
  })

  it("answers an unknown path under /api with its own problem+json 404", async () => {
    const response = await get("/api/nope")
    expect(response.status).toBe(404)
    expect(response.headers.get("content-type")).toBe(PROBLEM)
    expect(await response.json()).toMatchObject({ code: "not_found", status: 404 })
  })

  it("lets a client token create plan entries and refuses it on user routes", async () => {
    const token = await issueDemoToken("web", { client: true })
    const created = await sendJson(
      "POST",
      "/api/plans/v1/subscription-plans/public/",
      '{"email":"ada@Example.com","password":"correct horse"}',
      bearer(token)
    )
    expect(created.status).toBe(201)
    const forbidden = await get("/api/users/v1/preferences/language/", bearer(token))
    expect(forbidden.status).toBe(403)
    expect(await forbidden.json()).toMatchObject({ code: "insufficient_scope" })
  })

  it("refuses a bad token with 401 invalid_token", async () => {
    const good = await issueDemoToken("u_1")
    const [header, payload] = good.split(".")
    const badTokens = {
      "signed with another secret": await issueDemoToken("u_1", { secret: "not-the-secret-of-this-host-at-all-9d1c" }),
      expired: await issueDemoToken("u_1", { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
      "without a signature": `${header}.${payload}.`,
      "not a JWT": "definitely-not-a-jwt"
    }
    for (const [what, token] of Object.entries(badTokens)) {
      const response = await get("/api/payments/v1/payment-methods/", bearer(token))
      expect(response.status, what).toBe(401)
      expect(response.headers.get("www-authenticate"), what).toBe('Bearer realm="api", error="invalid_token"')
      expect(await response.json(), what).toMatchObject({ code: "invalid_token" })
    }
    const missing = await get("/api/payments/v1/payment-methods/")
    expect(missing.status).toBe(401)
    expect(await missing.json()).toMatchObject({ code: "unauthenticated" })
  })
})
