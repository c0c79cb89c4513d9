import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { SignJWT } from "jose"
import { once } from "node:events"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"

const secret = "docs-express-mount-secret-of-32-bytes-or-more"
let server: Server
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
  server = (await import("../express-mount.js")).server
  if (!server.listening) await once(server, "listening")
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

describe("docs/examples/express-mount.ts", () => {
  it("serves the host's route, with its JSON parser, and Accord's, with tokens signed by JWT_SECRET", async () => {
    const echoed = await fetch(`${base}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"a":1}'
    })
    expect(await echoed.json()).toEqual({ echo: { a: 1 } })
    const response = await fetch(`${base}/api/users/v1/preferences/language/`, {
      method: "PUT",
      headers: { authorization: `Bearer ${await issue("u_5")}`, "content-type": "application/json" },
      body: '{"language":"pt-br"}'
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ language: "pt-BR" })
  })

  it("refuses a token signed with another secret with 401 invalid_token", async () => {
    const token = await issue("u_5", "another-secret-that-is-long-enough-too!!")
    const response = await fetch(`${base}/api/users/v1/preferences/language/`, {
      headers: { authorization: `Bearer ${token}` }
    })
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({ code: "invalid_token" })
  })

  it("keeps Accord's problems under /api and the host's parser, error handler and 404 outside it", async () => {
    const inside = await fetch(`${base}/api/users/v1/preferences/language/`, {
      method: "PUT",
      headers: { authorization: `Bearer ${await issue("u_5")}`, "content-type": "application/json" },
      body: "{bad"
    })
    expect(inside.headers.get("content-type")).toBe("application/problem+json; charset=utf-8")
    expect(await inside.json()).toMatchObject({ code: "invalid_json" })
    const hostError = await fetch(`${base}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{bad"
    })
    expect(hostError.status).toBe(400)
    expect(await hostError.json()).toHaveProperty("error")
    const outside = await fetch(`${base}/nope`)
    expect(outside.status).toBe(404)
    expect(outside.headers.get("content-type")).not.toBe("application/problem+json; charset=utf-8")
  })
})
