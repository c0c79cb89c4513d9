import type { RunningServer } from "@accord/node/server"
import { startExpressServer } from "@accord/adapter-express"
import { startFastifyServer } from "@accord/adapter-fastify"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { startKoaServer } from "@accord/adapter-koa"
import { exchange, send } from "@accord/conformance"
import { startWith, type StartAdapter } from "@accord/test-support"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { makeMemoryRateLimiter } from "@accord/rate-limit"

const USER = "limits-user-token"
// The rate limit test's own credentials: the other tests spend tokens of USER's bucket.
const BURSTING_USER = "limits-bursting-token"
const OTHER_USER = "limits-other-token"
const seed = {
  users: [
    { id: "limits_u1", token: USER },
    { id: "limits_u2", token: BURSTING_USER },
    { id: "limits_u3", token: OTHER_USER }
  ]
}

/** Small limits, so that each one is reached with little traffic and little waiting. */
const small = {
  maxHeaderSize: 4096,
  maxPathLength: 100,
  bodyLimit: 64,
  requestTimeoutMs: 1000,
  headersTimeoutMs: 200
} as const
// Four requests per one-second window (capacity 4, refill 4 per second): a burst of five overruns it.
const rateLimit = { capacity: 4, refillPerSecond: 4 } as const

interface WireResponse {
  readonly status: number
  readonly reason: string
  /** Lower-case names, in the order sent. */
  readonly headers: ReadonlyArray<readonly [string, string]>
  readonly body: string
}

/** Splits one raw HTTP/1.1 response (as `exchange` collects it) into its parts. */
const parseWire = (wire: string): WireResponse => {
  const end = wire.indexOf("\r\n\r\n")
  const [statusLine = "", ...lines] = wire.slice(0, end).split("\r\n")
  const match = /^HTTP\/1\.1 (\d{3}) (.*)$/.exec(statusLine)
  return {
    status: Number(match?.[1]),
    reason: match?.[2] ?? "",
    headers: lines.map((line) => {
      const colon = line.indexOf(":")
      return [line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()] as const
    }),
    body: wire.slice(end + 4)
  }
}

/** What every problem answered before a request exists must look like: a complete problem, then the close. */
const expectClientErrorProblem = (wire: string, status: number, reason: string, code: string): void => {
  const response = parseWire(wire)
  expect(response.status).toBe(status)
  expect(response.reason).toBe(reason)
  expect(response.headers.map(([name]) => name)).toEqual([
    "content-type",
    "cache-control",
    "x-content-type-options",
    "x-request-id",
    "content-length",
    "date",
    "connection"
  ])
  const headers = Object.fromEntries(response.headers)
  expect(headers).toMatchObject({
    "content-type": "application/problem+json; charset=utf-8",
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    connection: "close",
    "content-length": String(Buffer.byteLength(response.body))
  })
  expect(headers["x-request-id"]).toMatch(/^[0-9a-f-]{36}$/)
  const body = JSON.parse(response.body) as Record<string, unknown>
  expect(Object.keys(body)).toEqual(["type", "title", "status", "detail", "code"])
  expect(body).toMatchObject({ type: "about:blank", title: reason, status, code })
}

/** A request that asks the server to close the connection once it answered: the exchange ends there. */
const request = (head: string, extra = ""): string => `${head}\r\nHost: limits\r\nConnection: close\r\n${extra}\r\n`
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })
const preferences = "/api/users/v1/preferences/language/"

describe.each<readonly [string, StartAdapter]>([
  ["koa", startKoaServer],
  ["fastify", startFastifyServer],
  ["express", startExpressServer],
  ["fetch", startFetchServer]
])("limits: %s", (_name, start) => {
  let defaults: RunningServer
  let limited: RunningServer
  beforeAll(async () => {
    // A limiter of its own per server: the adapters' suites must not spend each other's allowance.
    ;[defaults, limited] = await Promise.all([
      startWith(start)(seed),
      startWith(start, { ...small, rateLimit: makeMemoryRateLimiter(rateLimit) })(seed)
    ])
  })
  afterAll(async () => {
    await Promise.all([defaults.close(), limited.close()])
  })

  it("headers: up to 16 KiB by default, then 431 headers_too_large as a problem, and the connection closed", async () => {
    const fits = await exchange(defaults.url, request("GET /api/health HTTP/1.1", `X-Pad: ${"a".repeat(15_000)}\r\n`))
    expect(parseWire(fits.wire).status).toBe(200)
    const over = await exchange(defaults.url, request("GET /api/health HTTP/1.1", `X-Pad: ${"a".repeat(17_000)}\r\n`))
    expectClientErrorProblem(over.wire, 431, "Request Header Fields Too Large", "headers_too_large")
    expect(over.closed).toBe(true)
  })

  it("headers: maxHeaderSize sets the limit, and it bounds the request line too (431 before 414)", async () => {
    const fits = await exchange(limited.url, request("GET /api/health HTTP/1.1", `X-Pad: ${"a".repeat(3000)}\r\n`))
    expect(parseWire(fits.wire).status).toBe(200)
    const over = await exchange(limited.url, request("GET /api/health HTTP/1.1", `X-Pad: ${"a".repeat(5000)}\r\n`))
    expectClientErrorProblem(over.wire, 431, "Request Header Fields Too Large", "headers_too_large")
    const longLine = await exchange(limited.url, request(`GET /api/${"a".repeat(5000)} HTTP/1.1`))
    expectClientErrorProblem(longLine.wire, 431, "Request Header Fields Too Large", "headers_too_large")
  })

  it("malformed HTTP: 400 bad_request as a problem, and the connection closed", async () => {
    const answered = await exchange(defaults.url, "NOT HTTP\r\n\r\n")
    expectClientErrorProblem(answered.wire, 400, "Bad Request", "bad_request")
    expect(answered.closed).toBe(true)
  })

  it("path length: 2048 characters by default, maxPathLength sets it; longer is 414 uri_too_long", async () => {
    const path = (length: number) => `/api/${"a".repeat(length - "/api/".length)}`
    expect((await send(defaults.url, { method: "GET", path: path(2048) })).status).toBe(404)
    const tooLong = await send(defaults.url, { method: "GET", path: path(2049) })
    expect(tooLong.status).toBe(414)
    expect(JSON.parse(tooLong.body.toString())).toMatchObject({ title: "URI Too Long", code: "uri_too_long" })
    // The query string does not count.
    expect((await send(limited.url, { method: "GET", path: `${path(100)}?${"q".repeat(500)}` })).status).toBe(404)
    expect((await send(limited.url, { method: "GET", path: path(101) })).status).toBe(414)
  })

  it("body: bodyLimit sets the limit in bytes (413 payload_too_large past it)", async () => {
    const headers = { ...bearer(USER), "content-type": "application/json" }
    const body = (length: number) => `{"language":"en"${" ".repeat(length - '{"language":"en"}'.length)}}`
    expect((await send(limited.url, { method: "PUT", path: preferences, headers, body: body(64) })).status).toBe(200)
    const over = await send(limited.url, { method: "PUT", path: preferences, headers, body: body(65) })
    expect(over.status).toBe(413)
    expect(JSON.parse(over.body.toString())).toMatchObject({
      code: "payload_too_large",
      detail: "The body is larger than 64 bytes."
    })
  })

  it("request timeout: headers sent, body stalled: 408 request_timeout once requestTimeoutMs has passed", async () => {
    const started = performance.now()
    const stalled = await exchange(
      limited.url,
      request(
        "PUT /api/users/v1/preferences/language/ HTTP/1.1",
        `Authorization: Bearer ${USER}\r\nContent-Type: application/json\r\nContent-Length: 20\r\n`
      ) + "{",
      5000
    )
    const waited = performance.now() - started
    expectClientErrorProblem(stalled.wire, 408, "Request Timeout", "request_timeout")
    expect(stalled.closed).toBe(true)
    expect(waited).toBeGreaterThanOrEqual(small.requestTimeoutMs - 50)
    // The handler that was waiting for the body gave up quietly: the server goes on answering.
    expect((await send(limited.url, { method: "GET", path: "/api/health" })).status).toBe(200)
  })

  it("headers timeout: headers never finished: 408 request_timeout once headersTimeoutMs has passed, before the request timeout", async () => {
    // The reference is measured beside it: a request whose body stalls, started at the same moment, is answered at
    // the (longer) request timeout, so the unfinished headers must be answered first, whatever the machine's speed.
    const order: Array<string> = []
    const started = performance.now()
    const headersStalled = exchange(limited.url, "GET /api/health HTTP/1.1\r\nHost: lim", 5000).then((result) => {
      order.push("headers")
      return { result, waited: performance.now() - started }
    })
    const bodyStalled = exchange(
      limited.url,
      request(
        "PUT /api/users/v1/preferences/language/ HTTP/1.1",
        `Authorization: Bearer ${USER}\r\nContent-Type: application/json\r\nContent-Length: 20\r\n`
      ) + "{",
      5000
    ).then((result) => {
      order.push("body")
      return result
    })
    const [headers, body] = await Promise.all([headersStalled, bodyStalled])
    expectClientErrorProblem(headers.result.wire, 408, "Request Timeout", "request_timeout")
    expectClientErrorProblem(body.wire, 408, "Request Timeout", "request_timeout")
    expect(headers.waited).toBeGreaterThanOrEqual(small.headersTimeoutMs - 50)
    expect(order).toEqual(["headers", "body"])
  })

  it("rate limit: the request past the capacity is 429 rate_limited with Retry-After; others unaffected; the window ends", async () => {
    const get = (token: string) => send(limited.url, { method: "GET", path: preferences, headers: bearer(token) })
    const burst = await Promise.all(Array.from({ length: rateLimit.capacity + 1 }, () => get(BURSTING_USER)))
    const statuses = burst.map((response) => response.status).sort()
    expect(statuses).toEqual([200, 200, 200, 200, 429])
    const limitedResponse = burst.find((response) => response.status === 429)
    expect(limitedResponse?.headers["retry-after"]).toBe("1")
    expect(limitedResponse?.headers["content-type"]).toBe("application/problem+json; charset=utf-8")
    expect(JSON.parse(limitedResponse?.body.toString() ?? "")).toEqual({
      type: "about:blank",
      title: "Too Many Requests",
      status: 429,
      detail: "Too many requests with this credential; retry later.",
      code: "rate_limited"
    })
    // draft-ietf-httpapi-ratelimit-headers-10 (docs/api.md, "Rate limit"): the policy on every limited answer, and
    // the quota left after each request, counted down in the order the limiter took them.
    for (const response of burst) expect(response.headers["ratelimit-policy"]).toBe('"default";q=4;w=1')
    const remaining = burst.map(
      (response) => /^"default";r=(\d+);t=([01])$/.exec(response.headers["ratelimit"] ?? "")?.[1]
    )
    expect(remaining.sort()).toEqual(["0", "0", "1", "2", "3"])
    // Another credential has an allowance of its own.
    expect((await get(OTHER_USER)).headers["ratelimit"]).toMatch(/^"default";r=3;t=[01]$/)
    // The allowance is back when the window (capacity / refillPerSecond seconds) that began with the burst ends.
    await new Promise((resolve) => setTimeout(resolve, (1000 * rateLimit.capacity) / rateLimit.refillPerSecond + 100))
    expect((await get(BURSTING_USER)).status).toBe(200)
  })

  it("off by default: no 429 however many requests one credential sends", async () => {
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => send(defaults.url, { method: "GET", path: preferences, headers: bearer(USER) }))
    )
    expect(new Set(responses.map((response) => response.status))).toEqual(new Set([200]))
    for (const response of responses) expect(response.headers["ratelimit"]).toBeUndefined()
  })

  it("rate-limit headers only where the limiter was asked: not on a public route, not on a 401", async () => {
    expect(
      (await send(limited.url, { method: "GET", path: "/api/health" })).headers["ratelimit-policy"]
    ).toBeUndefined()
    const refused = await send(limited.url, { method: "GET", path: preferences })
    expect(refused.status).toBe(401)
    expect(refused.headers["ratelimit"]).toBeUndefined()
  })
})
