import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { once } from "node:events"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { demoToken, expectDemoCallAnswered, expectUnknownTokenRefused } from "./demo-call.js"

let server: Server
let base = ""

beforeAll(async () => {
  process.env.PORT = "0"
  server = (await import("../express-mount.js")).server
  if (!server.listening) await once(server, "listening")
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

describe("docs/examples/express-mount.ts", () => {
  it("answers the guide's curl line with the seeded user's payment methods", () => expectDemoCallAnswered(base))

  it("serves the host's route, with its JSON parser, and Accord's writes with the demo token", async () => {
    const echoed = await fetch(`${base}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"a":1}'
    })
    expect(await echoed.json()).toEqual({ echo: { a: 1 } })
    const response = await fetch(`${base}/api/users/v1/preferences/language/`, {
      method: "PUT",
      headers: { authorization: `Bearer ${demoToken}`, "content-type": "application/json" },
      body: '{"language":"pt-br"}'
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ language: "pt-BR" })
  })

  it("refuses a token its store does not hold with 401 invalid_token", () => expectUnknownTokenRefused(base))

  it("keeps Accord's problems under /api and the host's parser, error handler and 404 outside it", async () => {
    const inside = await fetch(`${base}/api/users/v1/preferences/language/`, {
      method: "PUT",
      headers: { authorization: `Bearer ${demoToken}`, "content-type": "application/json" },
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
