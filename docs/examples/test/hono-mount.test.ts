import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Hono } from "hono"
import { SignJWT } from "jose"

const secret = "docs-hono-mount-secret-of-32-bytes-or-more!"
let app: Hono
let dispose: () => Promise<void>

const issue = (sub: string, key = secret) =>
  new SignJWT({})
    .setProtectedHeader({ alg: "HS256" })
    .setSubject(sub)
    .setIssuer("https://login.example.com/")
    .setAudience("accord-api")
    .setExpirationTime("5m")
    .sign(new TextEncoder().encode(key))

beforeAll(async () => {
  Object.assign(process.env, {
    JWT_SECRET: secret,
    JWT_ISSUER: "https://login.example.com/",
    JWT_AUDIENCE: "accord-api"
  })
  const example = await import("../hono-mount.js")
  app = example.default
  dispose = () => example.runtime.dispose()
})
afterAll(() => dispose())

// Called as Bun, Deno and Workers call it: a Request in, a Response out.
describe("docs/examples/hono-mount.ts", () => {
  it("serves the host's route and Accord's, with tokens signed by JWT_SECRET", async () => {
    expect(await (await app.request("/hello")).json()).toEqual({ hello: "world" })
    const body = '{"language":"pt-br"}'
    const response = await app.request("/api/users/v1/preferences/language/", {
      method: "PUT",
      // A Request built in code declares no length: Accord reads a body the request declares (docs/api.md).
      headers: {
        authorization: `Bearer ${await issue("u_5")}`,
        "content-type": "application/json",
        "content-length": String(body.length)
      },
      body
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ language: "pt-BR" })
  })

  it("refuses a token signed with another secret with 401 invalid_token", async () => {
    const token = await issue("u_5", "another-secret-that-is-long-enough-too!!")
    const response = await app.request("/api/users/v1/preferences/language/", {
      headers: { authorization: `Bearer ${token}` }
    })
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({ code: "invalid_token" })
  })

  it("keeps Accord's 404 under /api, /api itself included, and Hono's outside it", async () => {
    for (const path of ["/api", "/api/nope"]) {
      const inside = await app.request(path)
      expect(inside.headers.get("content-type"), path).toBe("application/problem+json; charset=utf-8")
    }
    const outside = await app.request("/nope")
    expect(outside.status).toBe(404)
    expect(await outside.text()).toBe("404 Not Found")
  })
})
