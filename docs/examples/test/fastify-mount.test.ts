import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { FastifyInstance } from "fastify"
import { SignJWT } from "jose"

const secret = "docs-fastify-mount-secret-of-32-bytes-or-more"
let app: FastifyInstance
let base = ""

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
    JWT_AUDIENCE: "accord-api",
    PORT: "0"
  })
  app = (await import("../fastify-mount.js")).app
  const address = app.server.address()
  base = typeof address === "object" && address !== null ? `http://127.0.0.1:${address.port}` : ""
})
afterAll(() => app.close())

describe("docs/examples/fastify-mount.ts", () => {
  it("serves the host's route and Accord's, with tokens signed by JWT_SECRET", async () => {
    expect(await (await fetch(`${base}/hello`)).json()).toEqual({ hello: "world" })
    const response = await fetch(`${base}/api/users/v1/preferences/language/`, {
      headers: { authorization: `Bearer ${await issue("u_9")}` }
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ language: "en", timezone: 0 })
  })

  it("refuses a token signed with another secret with 401 invalid_token", async () => {
    const token = await issue("u_9", "another-secret-that-is-long-enough-too!!")
    const response = await fetch(`${base}/api/users/v1/preferences/language/`, {
      headers: { authorization: `Bearer ${token}` }
    })
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({ code: "invalid_token" })
  })

  it("keeps Accord's problems under /api and the host's parser outside it", async () => {
    const inside = await fetch(`${base}/api/users/v1/preferences/language/`, {
      method: "PUT",
      headers: { authorization: `Bearer ${await issue("u_9")}`, "content-type": "application/json" },
      body: "{bad"
    })
    expect(await inside.json()).toMatchObject({ code: "invalid_json" })
    const outside = await fetch(`${base}/nope`)
    expect(outside.status).toBe(404)
    expect(outside.headers.get("content-type")).not.toBe("application/problem+json; charset=utf-8")
  })
})
