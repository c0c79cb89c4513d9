import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { once } from "node:events"
import type { AddressInfo } from "node:net"
import { demoToken, expectDemoCallAnswered, expectUnknownTokenRefused } from "./demo-call.js"

let server: Awaited<typeof import("../hono-mount.js")>["server"]
let base = ""

// Served on Node by @hono/node-server, as the snippet does: requests over a socket, with the lengths a client sends.
beforeAll(async () => {
  process.env.PORT = "0"
  server = (await import("../hono-mount.js")).server
  if (!server.listening) await once(server, "listening")
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

describe("docs/examples/hono-mount.ts", () => {
  it("answers the guide's curl line with the seeded user's payment methods", () => expectDemoCallAnswered(base))

  it("serves the host's route, and Accord's writes with the demo token", async () => {
    expect(await (await fetch(`${base}/hello`)).json()).toEqual({ hello: "world" })
    const response = await fetch(`${base}/api/users/v1/preferences/language/`, {
      method: "PUT",
      headers: { authorization: `Bearer ${demoToken}`, "content-type": "application/json" },
      body: '{"language":"pt-br"}'
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ language: "pt-BR" })
  })

  it("refuses a token its store does not hold with 401 invalid_token", () => expectUnknownTokenRefused(base))

  it("keeps Accord's 404 under /api, /api itself included, and Hono's outside it", async () => {
    for (const path of ["/api", "/api/nope"]) {
      const inside = await fetch(`${base}${path}`)
      expect(inside.headers.get("content-type"), path).toBe("application/problem+json; charset=utf-8")
    }
    const outside = await fetch(`${base}/nope`)
    expect(outside.status).toBe(404)
    expect(await outside.text()).toBe("404 Not Found")
  })
})
