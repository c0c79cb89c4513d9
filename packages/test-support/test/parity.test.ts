import type { RunningServer } from "@accord/node/server"
import { startExpressServer } from "@accord/adapter-express"
import { startFastifyServer } from "@accord/adapter-fastify"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { startKoaServer } from "@accord/adapter-koa"
import { exchange } from "@accord/conformance"
import { makeParityFixture, parityCorpus, runCorpus, startWith, type StartAdapter } from "@accord/test-support"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

/** Everything on the wire except the values that must differ: Date, and a generated request id (client errors). */
const withoutDate = (wire: string): string =>
  wire.replace(/^Date: .*\r\n/gim, "").replace(/^x-request-id: [0-9a-f-]{36}\r\n/gm, "x-request-id: (generated)\r\n")

/** The standalone servers compared: every answer of each one must equal the first one's. */
const adapters: ReadonlyArray<readonly [name: string, start: StartAdapter]> = [
  ["koa", startKoaServer],
  ["fastify", startFastifyServer],
  ["express", startExpressServer],
  ["fetch", startFetchServer]
]

/** A request's bytes: the request line, Host and a fixed request id, then `rest` (headers, the blank line, a body). */
const request = (head: string, rest = ""): string => `${head}\r\nHost: parity\r\nX-Request-Id: parity-wire\r\n${rest}`

/** Every server's whole answer to `bytes` equals Koa's but for Date and generated request ids; resolves with Koa's. */
const expectSameWire = async (
  servers: ReadonlyArray<readonly [name: string, server: RunningServer]>,
  bytes: string
): Promise<string> => {
  const [fromKoa, ...fromOthers] = await Promise.all(servers.map(([, server]) => exchange(server.url, bytes)))
  expect(fromKoa?.wire).toMatch(/^HTTP\/1\.1 \d{3} /)
  expect(fromOthers).toHaveLength(adapters.length - 1)
  fromOthers.forEach((fromOther, index) => {
    const name = servers[index + 1]?.[0]
    expect({ ...fromOther, wire: withoutDate(fromOther.wire) }, name).toEqual({
      ...fromKoa,
      wire: withoutDate(fromKoa?.wire ?? "")
    })
  })
  return fromKoa?.wire ?? ""
}

describe("adapter parity: every standalone server answers as Koa does", () => {
  const fixture = makeParityFixture()
  const servers: Array<readonly [name: string, server: RunningServer]> = []

  beforeAll(async () => {
    // Separate memory stores seeded alike: the corpus is replayable, so each answer depends only on earlier ones.
    servers.push(
      ...(await Promise.all(
        adapters.map(async ([name, start]) => [name, await startWith(start)(fixture.seed)] as const)
      ))
    )
  })
  afterAll(async () => {
    await Promise.all(servers.map(([, server]) => server.close()))
  })

  it("the shared corpus: same status, contract headers, request-id behaviour and body bytes", async () => {
    const corpus = parityCorpus(fixture)
    const [reference = [], ...others] = await Promise.all(servers.map(([, server]) => runCorpus(server.url, corpus)))
    expect(others).toHaveLength(adapters.length - 1)
    expect(reference).toHaveLength(corpus.length)
    expect(reference.filter((response) => response.status === 0)).toEqual([])
    others.forEach((answers, index) => expect(answers, servers[index + 1]?.[0]).toEqual(reference))
  })

  // Beyond the contract's headers: the whole response on the wire, header names, order and spelling, reason phrase,
  // Content-Length and connection handling included, so neither framework adds or changes anything of its own.
  const auth = `Authorization: Bearer ${fixture.user.token}\r\n`
  const wireCases = [
    [
      "two GETs on one keep-alive connection",
      request("GET /api/health HTTP/1.1", "\r\n") + request("GET /api/health HTTP/1.1", "\r\n")
    ],
    ["HEAD: headers of GET, its Content-Length, no body", request("HEAD /api/openapi.json HTTP/1.1", "\r\n")],
    [
      "OPTIONS: 204 without Content-Type or Content-Length",
      request("OPTIONS /api/users/v1/preferences/language/ HTTP/1.1", "\r\n")
    ],
    ["405 with Allow", request("DELETE /api/health HTTP/1.1", "\r\n")],
    ["a method Fastify does not route by default", request("PROPFIND /api/health HTTP/1.1", "\r\n")],
    [
      "404 outside the prefix, JSON body the host parser would choke on",
      request("POST /elsewhere HTTP/1.1", "Content-Type: application/json\r\nContent-Length: 5\r\n\r\n{bad}")
    ],
    [
      "a Content-Type Fastify cannot parse, unauthenticated: 401 first",
      request(
        "PUT /api/users/v1/preferences/language/ HTTP/1.1",
        "Content-Type: nonsense\r\nContent-Length: 2\r\n\r\n{}"
      )
    ],
    [
      "a Content-Type Fastify cannot parse, authenticated: the core's 415",
      request(
        "PUT /api/users/v1/preferences/language/ HTTP/1.1",
        `${auth}Content-Type: nonsense\r\nContent-Length: 2\r\n\r\n{}`
      )
    ],
    ["a path find-my-way cannot decode", request("PUT /api/payments/v1/payment-methods/%zz/ HTTP/1.1", `${auth}\r\n`)],
    [
      "a 101-character payment method id",
      request(`PUT /api/payments/v1/payment-methods/${"a".repeat(101)}/ HTTP/1.1`, `${auth}\r\n`)
    ],
    ["absolute-form request target", request("GET http://parity/api/health?x=1 HTTP/1.1", "\r\n")],
    // Targets no fetch Request can be made of: the fetch server answers them through the Node bridge.
    ["asterisk-form request target", request("OPTIONS * HTTP/1.1", "\r\n")],
    ["a backslash in the path", request("GET /api\\health HTTP/1.1", "\r\n")],
    ["a Host no URL can have", "GET /api/health HTTP/1.1\r\nHost: bad host\r\nX-Request-Id: parity-wire\r\n\r\n"],
    ["HTTP/1.0", request("GET /api/health HTTP/1.0", "\r\n")],
    [
      "413 by declared length: answered at once, connection closed",
      request(
        "PUT /api/users/v1/preferences/language/ HTTP/1.1",
        `${auth}Content-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"a":`
      )
    ],
    [
      "413 while reading a chunked body: connection closed",
      request(
        "PUT /api/users/v1/preferences/language/ HTTP/1.1",
        `${auth}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n4e20\r\n${" ".repeat(20_000)}\r\n`
      )
    ],
    ["malformed HTTP", "NOT HTTP\r\n\r\n"],
    ["headers over Node's limit", request("GET /api/health HTTP/1.1", `X-Big: ${"a".repeat(20_000)}\r\n\r\n`)]
  ] as const
  const wireRequest = (name: (typeof wireCases)[number][0]): string =>
    wireCases.find(([caseName]) => caseName === name)?.[1] ?? ""

  it.each(wireCases)("on the wire: %s", async (_name, bytes) => {
    await expectSameWire(servers, bytes)
  })

  // Checked on every server: each framework's own default for these shapes differs from the core's.
  it.each(adapters)(
    "on the wire: the shapes that differ by default are the core's (204 bare, HEAD with GET's length, 413 closes): %s",
    async (name) => {
      const url = servers.find(([started]) => started === name)?.[1].url ?? ""
      const options = await exchange(url, wireRequest("OPTIONS: 204 without Content-Type or Content-Length"))
      expect(options.wire).toMatch(/^HTTP\/1\.1 204 No Content\r\n/)
      expect(options.wire).not.toMatch(/^content-(type|length):/im)
      const head = await exchange(url, wireRequest("HEAD: headers of GET, its Content-Length, no body"))
      expect(head.wire).toMatch(/^content-type: application\/json; charset=utf-8\r\n/m)
      // GET's Content-Length (docs/SECURITY.md, item 25): the length of openapi.json, and nothing after the headers.
      expect(head.wire).toMatch(/^content-length: [1-9][0-9]*\r\n/im)
      expect(head.wire.endsWith("\r\n\r\n")).toBe(true)
      const refused = await exchange(url, wireRequest("413 by declared length: answered at once, connection closed"))
      expect(refused.wire).toMatch(/^HTTP\/1\.1 413 /)
      expect(refused.wire).toMatch(/^Connection: close\r\n/m)
      expect(refused.closed).toBe(true)
      const unparsable = await exchange(url, wireRequest("malformed HTTP"))
      expect(unparsable.wire).toMatch(
        /^HTTP\/1\.1 400 Bad Request\r\ncontent-type: application\/problem\+json; charset=utf-8\r\n/
      )
      expect(unparsable.wire).toMatch(/^Connection: close\r\n\r\n\{.*"code":"bad_request"\}$/m)
      const oversized = await exchange(url, wireRequest("headers over Node's limit"))
      expect(oversized.wire).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/)
      expect(oversized.wire).toMatch(/^Connection: close\r\n\r\n\{.*"code":"headers_too_large"\}$/m)
    }
  )
})

// With CORS on (docs/api.md, "CORS"; docs/SECURITY.md, items 37 and 38): the same bytes from every binding, Vary in the
// same place, for the requests a browser and a shared cache make, and two Origin lines.
describe("adapter parity with CORS on: every standalone server answers as Koa does", () => {
  const fixture = makeParityFixture()
  const servers: Array<readonly [name: string, server: RunningServer]> = []
  const origin = "https://app.example"

  beforeAll(async () => {
    servers.push(
      ...(await Promise.all(
        adapters.map(
          async ([name, start]) => [name, await startWith(start, { corsOrigins: "*" })(fixture.seed)] as const
        )
      ))
    )
  })
  afterAll(async () => {
    await Promise.all(servers.map(([, server]) => server.close()))
  })

  const preferences = "/api/users/v1/preferences/language/"
  const preflight = "Access-Control-Request-Method: PUT\r\n"
  it.each([
    ["no Origin", request("GET /api/health HTTP/1.1", "\r\n"), "x-request-id: parity-wire\r\nvary: Origin\r\n"],
    [
      "an Origin",
      request("GET /api/health HTTP/1.1", `Origin: ${origin}\r\n\r\n`),
      `x-request-id: parity-wire\r\naccess-control-allow-origin: ${origin}\r\n`
    ],
    [
      "two Origin lines",
      request("GET /api/health HTTP/1.1", `Origin: ${origin}\r\nOrigin: ${origin}\r\n\r\n`),
      "x-request-id: parity-wire\r\nvary: Origin\r\n"
    ],
    [
      "a preflight",
      request(`OPTIONS ${preferences} HTTP/1.1`, `Origin: ${origin}\r\n${preflight}\r\n`),
      "vary: Origin, Access-Control-Request-Method, Access-Control-Request-Headers\r\n"
    ],
    [
      "a preflight with two Origin lines",
      request(`OPTIONS ${preferences} HTTP/1.1`, `Origin: ${origin}\r\nOrigin: ${origin}\r\n${preflight}\r\n`),
      "x-request-id: parity-wire\r\nvary: Origin\r\nallow: "
    ],
    [
      "a 401 without Origin",
      request(`GET ${preferences} HTTP/1.1`, "\r\n"),
      "x-request-id: parity-wire\r\nvary: Origin\r\nwww-authenticate: "
    ],
    [
      "a docs file in br without Origin",
      request("GET /api/docs/swagger-ui.css HTTP/1.1", "Accept-Encoding: br\r\n\r\n"),
      "x-request-id: parity-wire\r\nvary: Origin, Accept-Encoding\r\n"
    ]
  ])("on the wire: %s", async (_name, bytes, headers) => {
    const wire = await expectSameWire(servers, bytes)
    // The head only: a failure then shows no compressed body.
    expect(wire.slice(0, wire.indexOf("\r\n\r\n") + 2)).toContain(headers)
  })
})
