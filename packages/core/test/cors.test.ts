import { defaultPreferenceValues, type Preferences } from "@accord/domain"
import {
  type DocsAssets,
  type HttpHandler,
  type HttpHandlerOptions,
  type HttpResponse,
  makeHttpHandler
} from "@accord/core"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { runtimeWithPorts, tokenTableAuthenticator } from "@accord/test-support"

// docs/api.md, "CORS"; docs/SECURITY.md, items 37 and 38.

const record: Preferences = { id: 1, ...defaultPreferenceValues, createdAt: new Date(0), updatedAt: new Date(0) }
const runtime = runtimeWithPorts({
  authenticator: tokenTableAuthenticator(),
  preferences: { getOrCreate: () => Effect.succeed(record) },
  storeAdmin: { ping: Effect.void }
})
afterAll(() => runtime.dispose())

const IMMUTABLE = "public, max-age=31536000, immutable"
const utf8 = new TextEncoder()
const docs: DocsAssets = new Map([
  [
    "app.js",
    { contentType: "text/javascript", body: utf8.encode("x".repeat(500)), cacheControl: IMMUTABLE, encodings: {} }
  ],
  ["plain.css", { contentType: "text/css", body: utf8.encode("body{}") }]
])
const ALLOWED = "https://app.example"
const PREFERENCES = "/api/users/v1/preferences/language/"
const EXPOSED =
  "X-Request-Id, ETag, Retry-After, RateLimit, RateLimit-Policy, WWW-Authenticate, Deprecation, Sunset, Link"

const handlerWith = (corsOrigins?: HttpHandlerOptions["corsOrigins"]): HttpHandler =>
  makeHttpHandler({ runtime, docs, ...(corsOrigins === undefined ? {} : { corsOrigins }) })
const listed = handlerWith([ALLOWED])
const any = handlerWith("*")
const off = handlerWith()

/** The entity tag of the file and of the preferences, for the 304s. */
const tagOf = async (handler: HttpHandler, path: string, headers: Record<string, string> = {}): Promise<string> =>
  (await handler({ method: "GET", path, headers })).headers["etag"] ?? "no ETag"

/** One of each kind of answer: 200, HEAD, 204 OPTIONS, refused preflight, 304s, files, 401, 404, 405, 414, 500. */
const everyKindOfAnswer = async (
  handler: HttpHandler,
  origin: Record<string, string>
): Promise<ReadonlyArray<readonly [string, HttpResponse]>> => {
  const bearer = { authorization: "Bearer user-token" }
  const fileTag = await tagOf(handler, "/api/docs/app.js")
  const preferencesTag = await tagOf(handler, PREFERENCES, bearer)
  const requests = [
    ["GET health", { method: "GET", path: "/api/health" }],
    ["HEAD health", { method: "HEAD", path: "/api/health" }],
    ["OPTIONS", { method: "OPTIONS", path: PREFERENCES }],
    [
      "preflight of an unserved method",
      { method: "OPTIONS", path: PREFERENCES, headers: { "access-control-request-method": "DELETE" } }
    ],
    ["GET preferences", { method: "GET", path: PREFERENCES, headers: bearer }],
    ["304 preferences", { method: "GET", path: PREFERENCES, headers: { ...bearer, "if-none-match": preferencesTag } }],
    ["401", { method: "GET", path: PREFERENCES }],
    ["404", { method: "GET", path: "/api/nothing" }],
    ["405", { method: "DELETE", path: "/api/health" }],
    ["414", { method: "GET", path: `/api/${"a".repeat(2100)}` }],
    // The payment methods' port dies (runtimeWithPorts): the 500.
    ["500", { method: "GET", path: "/api/payments/v1/payment-methods/", headers: bearer }],
    ["plain file", { method: "GET", path: "/api/docs/plain.css" }],
    ["negotiated file", { method: "GET", path: "/api/docs/app.js" }],
    ["304 negotiated file", { method: "GET", path: "/api/docs/app.js", headers: { "if-none-match": fileTag } }]
  ] as const
  return Promise.all(
    requests.map(
      async ([name, request]) =>
        [
          name,
          await handler({ ...request, headers: { ...origin, ...("headers" in request ? request.headers : {}) } })
        ] as const
    )
  )
}

/** `Vary` and the CORS headers of each answer, by name. */
const corsOf = (answers: ReadonlyArray<readonly [string, HttpResponse]>) =>
  Object.fromEntries(
    answers.map(([name, response]) => [
      name,
      Object.fromEntries(
        Object.entries(response.headers).filter(([header]) => header === "vary" || header.startsWith("access-control-"))
      )
    ])
  )

/** What every answer carries when the origin is not answered: `Vary` only, Origin first. */
const varyOnly = (answers: ReadonlyArray<readonly [string, HttpResponse]>) =>
  Object.fromEntries(
    answers.map(([name]) => [name, { vary: name.includes("negotiated file") ? "Origin, Accept-Encoding" : "Origin" }])
  )

describe("with CORS on, every answer varies on Origin (docs/SECURITY.md, item 37)", () => {
  it("answers each kind of request: 200, 304, 401, 404, 405, 414, 500, the files, OPTIONS", async () => {
    const answers = await everyKindOfAnswer(listed, {})
    expect(answers.map(([name, response]) => [name, response.status])).toEqual([
      ["GET health", 200],
      ["HEAD health", 200],
      ["OPTIONS", 204],
      ["preflight of an unserved method", 204],
      ["GET preferences", 200],
      ["304 preferences", 304],
      ["401", 401],
      ["404", 404],
      ["405", 405],
      ["414", 414],
      ["500", 500],
      ["plain file", 200],
      ["negotiated file", 200],
      ["304 negotiated file", 304]
    ])
  })

  it.each([
    ["a list of origins, no Origin", [ALLOWED], {}],
    ["a list of origins, another origin", [ALLOWED], { origin: "https://other.example" }],
    ["*, no Origin", "*", {}]
  ] as const)("%s: Vary: Origin and no other CORS header", async (_name, corsOrigins, origin) => {
    const answers = await everyKindOfAnswer(corsOrigins === "*" ? any : listed, origin)
    expect(corsOf(answers)).toEqual(varyOnly(answers))
  })

  it("an allowed origin: the CORS headers and Vary on every answer but a refused preflight's (Vary only)", async () => {
    const answers = await everyKindOfAnswer(listed, { origin: ALLOWED })
    const allowed = { "access-control-allow-origin": ALLOWED, "access-control-expose-headers": EXPOSED }
    expect(corsOf(answers)).toEqual(
      Object.fromEntries(
        Object.entries(varyOnly(answers)).map(([name, vary]) => [
          name,
          name === "preflight of an unserved method" ? vary : { ...allowed, ...vary }
        ])
      )
    )
    const preflight = await listed({
      method: "OPTIONS",
      path: PREFERENCES,
      headers: { origin: ALLOWED, "access-control-request-method": "PUT" }
    })
    expect(preflight.headers["vary"]).toBe("Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
  })

  it("Vary stays where the CORS headers are: after X-Request-Id, before what an answer adds", async () => {
    const names = async (handler: HttpHandler, path: string, headers: Record<string, string> = {}) =>
      Object.keys((await handler({ method: "GET", path, headers })).headers)
    const common = ["content-type", "cache-control", "x-content-type-options", "x-request-id"]
    expect(await names(listed, "/api/health")).toEqual([...common, "vary"])
    expect(await names(listed, "/api/health", { origin: ALLOWED })).toEqual([
      ...common,
      "access-control-allow-origin",
      "access-control-expose-headers",
      "vary"
    ])
    expect(await names(listed, "/api/docs/app.js")).toEqual([...common, "vary", "etag"])
    expect(await names(off, "/api/docs/app.js")).toEqual([...common, "etag", "vary"])
  })

  it("with CORS off nothing varies on Origin, whatever the request sends", async () => {
    for (const origin of [{}, { origin: ALLOWED }]) {
      const answers = await everyKindOfAnswer(off, origin)
      expect(corsOf(answers)).toEqual(
        Object.fromEntries(
          answers.map(([name]) => [name, name.includes("negotiated file") ? { vary: "Accept-Encoding" } : {}])
        )
      )
    }
  })
})

describe("only a single serialised origin is answered (docs/SECURITY.md, item 38)", () => {
  const health = (handler: HttpHandler, origin: string | ReadonlyArray<string>) =>
    handler({ method: "GET", path: "/api/health", headers: { origin } })

  it.each([
    "https://app.example",
    "http://localhost:5173",
    "http://127.0.0.1:8080",
    "http://[::1]:3000",
    "https://xn--bcher-kva.example",
    "https://a_b.example:65535",
    "chrome-extension://abcdefghijklmnop",
    // The origin of a sandboxed frame, a file: page, a data: URL: allowed under `*` like any other (docs/api.md, "CORS").
    "null"
  ])("under *, %s is reflected", async (origin) => {
    const response = await health(any, origin)
    expect(response.headers["access-control-allow-origin"]).toBe(origin)
    expect(response.headers["vary"]).toBe("Origin")
  })

  it.each([
    // Two Origin lines as Node and fetch's Headers join them.
    "https://a.example, https://b.example",
    "https://a.example,https://b.example",
    "https://app.example, https://app.example",
    "null, https://a.example",
    "https://a.example https://b.example",
    "https://a.example\thttps://b.example",
    "https://a.example/",
    "https://a.example/path",
    "https://a.example?x=1",
    "https://a.example#x",
    "https://user@a.example",
    "https://a.example:",
    "https://a.example:65536",
    "https://a.example:0443",
    "https://",
    "://a.example",
    "a.example",
    "1https://a.example",
    "HTTPS://APP.EXAMPLE",
    "https://[::1",
    "https://[]",
    "Null",
    "*",
    "",
    `https://${"a".repeat(600)}.example`
  ])("under *, %j gets no CORS headers, and still varies on Origin", async (origin) => {
    const response = await health(any, origin)
    expect(Object.keys(response.headers).filter((name) => name.startsWith("access-control-"))).toEqual([])
    expect(response.headers["vary"]).toBe("Origin")
  })

  it("two Origin values a host hands over as a list get no CORS headers, even both allowed", async () => {
    for (const handler of [any, listed]) {
      const response = await health(handler, [ALLOWED, ALLOWED])
      expect(response.headers["access-control-allow-origin"]).toBeUndefined()
      expect(response.headers["vary"]).toBe("Origin")
    }
  })

  it("a listed origin is answered only as listed: no list, prefix or suffix of it", async () => {
    for (const origin of [`${ALLOWED}, ${ALLOWED}`, `${ALLOWED}.evil.example`, `${ALLOWED}:443`, "null"])
      expect((await health(listed, origin)).headers["access-control-allow-origin"], origin).toBeUndefined()
    expect((await health(listed, ALLOWED)).headers["access-control-allow-origin"]).toBe(ALLOWED)
  })

  // The grammar as a pattern, for comparison only: the handler checks it in one pass, no pattern at all.
  const SERIALISED_ORIGIN =
    /^(?:null|[a-z][a-z0-9+.-]*:\/\/(?:[a-z0-9._-]+|\[[0-9a-f:.]+\])(?::(?:0|[1-9][0-9]{0,4}))?)$/
  const reference = (value: string): boolean => {
    if (!SERIALISED_ORIGIN.test(value)) return false
    const port = /:([0-9]+)$/.exec(value)?.[1]
    return port === undefined || Number(port) <= 65535
  }

  it("reflects exactly the values of the grammar (any string over the characters that matter)", async () => {
    const unit = fc.constantFrom("a", "z", "0", "9", ":", "/", ".", "-", "_", "+", "[", "]", ",", " ", "A", "null")
    const origins = fc.oneof(
      fc.string({ unit, maxLength: 30 }),
      fc
        .tuple(fc.constantFrom("http", "https", "x+y.z-1", "A", "1a"), fc.string({ unit, maxLength: 20 }))
        .map(([scheme, rest]) => `${scheme}://${rest}`)
    )
    await fc.assert(
      fc.asyncProperty(origins, async (origin) => {
        const reflected = (await health(any, origin)).headers["access-control-allow-origin"]
        expect(reflected, origin).toBe(reference(origin) ? origin : undefined)
      }),
      { numRuns: 2000 }
    )
  })
})
