import { Unavailable } from "@accord/domain"
import { defineOperation } from "@accord/contract"
import { type AccordRuntime, type HttpResponse, makeHttpHandler } from "@accord/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { runtimeWithPorts } from "@accord/test-support"

// Every port but the store's ping dies: a probe that touched anything else would answer 500.
const broken = (): Effect.Effect<never> => Effect.die(new Error("broken port"))
const runtimeWithPing = (ping: Effect.Effect<void, Unavailable>): AccordRuntime =>
  runtimeWithPorts({ storeAdmin: { ping } }, broken)

let pings = 0
const reachable = runtimeWithPing(Effect.sync(() => void pings++))
const unreachable = runtimeWithPing(Effect.fail(new Unavailable({ reason: "store_unreachable", retryAfterSeconds: 1 })))
const storeDies = runtimeWithPing(broken())

const get = (path: string, method = "GET") => ({ method, path, headers: { authorization: "Bearer $" } })
const live = get("/api/health/live")
const ready = get("/api/health/ready")
const health = get("/api/health")

const body = (response: HttpResponse): unknown => JSON.parse(String(response.body))

const expectOk = (response: HttpResponse): void => {
  expect(response.status).toBe(200)
  expect(response.headers["content-type"]).toBe("application/json; charset=utf-8")
  expect(body(response)).toEqual({ status: "ok" })
}

const expectUnavailable = (response: HttpResponse, detail: string): void => {
  expect(response.status).toBe(503)
  expect(response.headers["content-type"]).toBe("application/problem+json; charset=utf-8")
  expect(response.headers["retry-after"]).toBe("1")
  expect(body(response)).toEqual({
    type: "about:blank",
    title: "Service Unavailable",
    status: 503,
    detail,
    code: "unavailable"
  })
}

const DRAINING_DETAIL = "The service is shutting down and takes no new requests; retry later."

describe("liveness and readiness probes (docs/api.md, Probes)", () => {
  it("liveness answers 200 without calling the store, whatever the store and the drain", async () => {
    for (const runtime of [storeDies, unreachable]) {
      for (const isDraining of [() => false, () => true]) {
        const handler = makeHttpHandler({ runtime, isDraining })
        expectOk(await handler(live))
      }
    }
  })

  it("readiness follows the host's isDraining hook, asked on every request; health and other routes do not", async () => {
    let draining = false
    const handler = makeHttpHandler({ runtime: reachable, isDraining: () => draining })
    const before = pings
    expectOk(await handler(ready))
    expect(pings, "readiness pings the store").toBe(before + 1)

    draining = true
    const whileDraining = await handler(ready)
    expectUnavailable(whileDraining, DRAINING_DETAIL)
    expect(pings, "a draining process answers without asking the store").toBe(before + 1)
    expect((await handler(get("/api/health/ready", "HEAD"))).status).toBe(503)
    expectOk(await handler(health))
    expectOk(await handler(live))

    // The host may stop draining (e.g. it cancelled its shutdown): readiness answers 200 again.
    draining = false
    expectOk(await handler(ready))
  })

  it("readiness is 503 unavailable while the store is unreachable, like health", async () => {
    const handler = makeHttpHandler({ runtime: unreachable })
    expectUnavailable(await handler(ready), "The service cannot answer right now; retry later.")
    expectUnavailable(await handler(health), "The service cannot answer right now; retry later.")
  })

  it("without an isDraining hook readiness is the store's health", async () => {
    expectOk(await makeHttpHandler({ runtime: reachable })(ready))
  })

  it("refuses, at compile time, unavailableWhileDraining on an operation that cannot answer unavailable", () => {
    const probe = defineOperation({
      operationId: "probe",
      method: "GET",
      path: "/probe",
      access: "public",
      success: { status: 200, schema: Schema.Struct({}) },
      errors: [],
      records: "none"
    })
    expect(probe.unavailableWhileDraining).toBe(false)
    defineOperation({
      operationId: "probe",
      method: "GET",
      path: "/probe",
      access: "public",
      success: { status: 200, schema: Schema.Struct({}) },
      errors: [],
      // @ts-expect-error: a readiness probe answers 503 unavailable, so it must declare Unavailable
      unavailableWhileDraining: true,
      records: "none"
    })
  })
})
