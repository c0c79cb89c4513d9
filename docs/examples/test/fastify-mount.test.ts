import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { FastifyInstance } from "fastify"
import { demoToken, expectDemoCallAnswered, expectUnknownTokenRefused } from "./demo-call.js"

let app: FastifyInstance
let base = ""

beforeAll(async () => {
  process.env.PORT = "0"
  app = (await import("../fastify-mount.js")).app
  const address = app.server.address()
  base = typeof address === "object" && address !== null ? `http://127.0.0.1:${address.port}` : ""
})
afterAll(() => app.close())

describe("docs/examples/fastify-mount.ts", () => {
  it("answers the guide's curl line with the seeded user's payment methods", () => expectDemoCallAnswered(base))

  it("serves the host's route, and Accord's with the demo token", async () => {
    expect(await (await fetch(`${base}/hello`)).json()).toEqual({ hello: "world" })
    const response = await fetch(`${base}/api/users/v1/preferences/language/`, {
      headers: { authorization: `Bearer ${demoToken}` }
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ language: "en", timezone: 0 })
  })

  it("refuses a token its store does not hold with 401 invalid_token", () => expectUnknownTokenRefused(base))

  it("keeps Accord's problems under /api and the host's parser outside it", async () => {
    const inside = await fetch(`${base}/api/users/v1/preferences/language/`, {
      method: "PUT",
      headers: { authorization: `Bearer ${demoToken}`, "content-type": "application/json" },
      body: "{bad"
    })
    expect(await inside.json()).toMatchObject({ code: "invalid_json" })
    const outside = await fetch(`${base}/nope`)
    expect(outside.status).toBe(404)
    expect(outside.headers.get("content-type")).not.toBe("application/problem+json; charset=utf-8")
  })
})
