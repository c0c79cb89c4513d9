import { makeHttpHandler } from "@accord/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runtimeWithPorts } from "@accord/test-support"

/** A runtime whose every port method does `port()`. */
const runtimeWhosePortsAll = (port: () => Effect.Effect<never>) => runtimeWithPorts({}, port)

// Every port dies: whatever the handler runs is a defect, answered as a 500 and reported to onInternalError.
const runtime = runtimeWhosePortsAll(() => Effect.die(new Error("broken port")))

const health = { method: "GET", path: "/api/health", headers: {} }

describe("the handler and its host's callbacks", () => {
  it("answers a defect with a 500 and reports it with the request id", async () => {
    const reported: Array<string> = []
    const handler = makeHttpHandler({ runtime, onInternalError: (requestId) => reported.push(requestId) })
    const response = await handler(health)
    expect(response.status).toBe(500)
    expect(reported).toEqual([response.headers["x-request-id"]])
  })

  it("returns a rejected promise, never throws, when a host callback throws", async () => {
    const throwing = makeHttpHandler({
      runtime,
      onInternalError: () => {
        throw new Error("host logger down")
      }
    })
    let answer: Promise<unknown> | undefined
    expect(() => (answer = throwing(health))).not.toThrow()
    await expect(answer).rejects.toThrow("host logger down")

    const throwingLog = makeHttpHandler({
      runtime,
      onResponse: () => {
        throw new Error("host log down")
      }
    })
    let logged: Promise<unknown> | undefined
    expect(() => (logged = throwingLog({ method: "GET", path: "/elsewhere", headers: {} }))).not.toThrow()
    await expect(logged).rejects.toThrow("host log down")
  })

  it("calls onRequest as it takes each request, before its one onResponse, including refusals and 500s", async () => {
    const calls: Array<string> = []
    const handler = makeHttpHandler({
      runtime,
      onRequest: () => calls.push("request"),
      onResponse: (log) => calls.push(`response ${log.status}`)
    })
    await handler(health)
    await handler({ method: "GET", path: "/elsewhere", headers: {} })
    expect(calls).toEqual(["request", "response 500", "request", "response 404"])
  })

  it('logs each duration in milliseconds to the microsecond (docs/operations.md, "Logs")', async () => {
    const durations: Array<number> = []
    const handler = makeHttpHandler({ runtime, onResponse: (log) => durations.push(log.durationMs) })
    for (let i = 0; i < 20; i++) await handler({ method: "GET", path: "/elsewhere", headers: {} })
    expect(durations).toHaveLength(20)
    for (const ms of durations) {
      expect(ms).toBeGreaterThanOrEqual(0)
      expect(String(ms)).toMatch(/^\d+(\.\d{1,3})?$/)
    }
  })

  it("returns a rejected promise, never throws, when onRequest throws", async () => {
    const throwing = makeHttpHandler({
      runtime,
      onRequest: () => {
        throw new Error("host gauge down")
      }
    })
    let answer: Promise<unknown> | undefined
    expect(() => (answer = throwing(health))).not.toThrow()
    await expect(answer).rejects.toThrow("host gauge down")
  })
})

describe("a request whose program the host interrupts (the runtime disposed at a drain's end)", () => {
  it("is answered 503 unavailable, as a drain answers, and reported as no internal error", async () => {
    const stalling = runtimeWhosePortsAll(() => Effect.never)
    const reported: Array<string> = []
    const handler = makeHttpHandler({ runtime: stalling, onInternalError: (requestId) => reported.push(requestId) })
    const answer = handler(health)
    await new Promise((resolve) => setTimeout(resolve, 20))
    await stalling.dispose()
    const response = await answer
    expect(response.status).toBe(503)
    expect(JSON.parse(String(response.body))).toMatchObject({ code: "unavailable" })
    expect(reported).toEqual([])
  })
})
