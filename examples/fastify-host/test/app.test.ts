import { testScryptCost } from "@accord/node/scrypt"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { FastifyInstance } from "fastify"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { createFastifyHost } from "../src/app.js"
import { makeAccordRuntime, type RuntimeOptions } from "../src/runtime.js"
import { issueDemoToken, makeDemoKeys, type DemoKeys } from "../src/tokens.js"

const PROBLEM = "application/problem+json; charset=utf-8"
const databaseUrl = process.env["DATABASE_URL"] || undefined

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** The whole behaviour of the example, on one store. */
const hostSuite = (store: Omit<RuntimeOptions, "keys" | "scrypt">) => {
  let app: FastifyInstance
  let keys: DemoKeys
  let base = ""
  beforeAll(async () => {
    keys = await makeDemoKeys()
    const runtime = await makeAccordRuntime({ ...store, keys, scrypt: testScryptCost })
    app = await createFastifyHost({ runtime, keys })
    base = await app.listen({ host: "127.0.0.1", port: 0 })
  })
  afterAll(() => app.close())

  const get = (path: string, headers: Record<string, string> = {}) => fetch(`${base}${path}`, { headers })
  const sendJson = (method: string, path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { method, headers: { "content-type": "application/json", ...headers }, body })
  const signIn = async (user: string, client = false) => {
    const response = await sendJson("POST", "/login", JSON.stringify({ user, client }))
    expect(response.status).toBe(200)
    return ((await response.json()) as { token: string }).token
  }

  describe("the host's own routes", () => {
    it("answers GET /hello", async () => {
      const response = await get("/hello?name=Ada")
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ message: "Hello, Ada!" })
    })

    it("parses JSON with Fastify's default parser on POST /echo", async () => {
      const response = await sendJson("POST", "/echo", '{"sku":"A-1","qty":2}')
      expect(response.status).toBe(200)
      expect(await response.json()).toEqual({ echo: { sku: "A-1", qty: 2 } })
    })

    it("answers malformed JSON on its own route in its own error format", async () => {
      const response = await sendJson("POST", "/echo", "{bad")
      expect(response.status).toBe(400)
      expect(response.headers.get("content-type")).toBe("application/json; charset=utf-8")
      const body = (await response.json()) as { error: { status: number; message: string } }
      expect(body.error.status).toBe(400)
      expect(body.error.message).toMatch(/JSON/)
      expect(Object.keys(body)).toEqual(["error"])
    })

    it("validates its sign-in body with its own schema and error format", async () => {
      const response = await sendJson("POST", "/login", '{"user":"not a valid id!"}')
      expect(response.status).toBe(400)
      expect(await response.json()).toMatchObject({ error: { status: 400 } })
    })

    it("publishes the public key set Accord verifies with", async () => {
      const response = await get("/.well-known/jwks.json")
      expect(await response.json()).toEqual(keys.jwks)
      expect(JSON.stringify(keys.jwks)).not.toContain('"d"')
    })

    it("answers an unknown path outside /api with its own 404, not Accord's", async () => {
      for (const path of ["/nope", "/apis"]) {
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
    })
  })

  describe("Accord under /api", () => {
    it("answers its routes with a token from the host's sign-in", async () => {
      const token = await signIn("u_1")
      expect((await get("/api/health")).status).toBe(200)
      const list = await get("/api/payments/v1/payment-methods/", bearer(token))
      expect(list.status).toBe(200)
      expect(((await list.json()) as { data: Array<{ id: string; is_default: boolean }> }).data).toMatchObject([
        { id: "pm_bank", is_default: false },
        { id: "pm_card", is_default: true }
      ])
      const updated = await sendJson(
        "PUT",
        "/api/users/v1/preferences/language/",
        '{"language":"pt-br"}',
        bearer(token)
      )
      expect(updated.status).toBe(200)
      expect(await updated.json()).toMatchObject({ language: "pt-BR" })
    })

    it("reads its own bodies: malformed JSON is Accord's invalid_json problem", async () => {
      const token = await signIn("u_2")
      const response = await sendJson("PUT", "/api/users/v1/preferences/language/", "{bad", bearer(token))
      expect(response.status).toBe(400)
      expect(response.headers.get("content-type")).toBe(PROBLEM)
      expect(await response.json()).toMatchObject({ code: "invalid_json" })
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
      const token = await signIn("web", true)
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
      const good = await signIn("u_1")
      const [header, , signature] = good.split(".")
      const forged = Buffer.from(
        JSON.stringify({ sub: "u_2", iss: "https://fastify-host.example", aud: "accord-api", exp: 4_102_444_800 })
      ).toString("base64url")
      const badTokens = {
        "signed with another key": await issueDemoToken({ ...(await makeDemoKeys()), kid: keys.kid }, "u_1"),
        expired: await issueDemoToken(keys, "u_1", { expiresIn: Math.floor(Date.now() / 1000) - 60 }),
        "with a forged payload": `${header}.${forged}.${signature}`,
        "not a JWT": "definitely-not-a-jwt"
      }
      for (const [what, token] of Object.entries(badTokens)) {
        const response = await get("/api/payments/v1/payment-methods/", bearer(token))
        expect(response.status, what).toBe(401)
        expect(response.headers.get("www-authenticate"), what).toBe('Bearer realm="api", error="invalid_token"')
        expect(await response.json(), what).toMatchObject({ code: "invalid_token" })
      }
    })
  })
}

describe("fastify-host on PGlite (the default)", () => hostSuite({}))

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? "fastify-host on PostgreSQL (skipped: DATABASE_URL not set)"
    : "fastify-host on PostgreSQL (DATABASE_URL)",
  () => {
    // A schema of its own, dropped afterwards, so the run starts empty and leaves nothing behind.
    const schema = `example_fastify_${randomBytes(4).toString("hex")}`
    afterAll(async () => {
      const client = new pg.Client({ connectionString: databaseUrl })
      await client.connect()
      try {
        await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      } finally {
        await client.end()
      }
    })
    hostSuite({ databaseUrl, databaseSchema: schema })
  }
)
