import { type DocsAssets, makeHttpHandler } from "@accord/core"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runtimeWithPorts } from "@accord/test-support"

// Static files never reach a port: every port dies, so touching one would show as a 500.
const broken = (): Effect.Effect<never> => Effect.die(new Error("a static file reached a port"))
const runtime = runtimeWithPorts({}, broken)
afterAll(() => runtime.dispose())

const utf8 = new TextEncoder()
const IMMUTABLE = "public, max-age=31536000, immutable"
const docs: DocsAssets = new Map([
  [
    "index.html",
    { contentType: "text/html; charset=utf-8", body: utf8.encode("<html></html>"), cacheControl: "no-cache" }
  ],
  ["app.js", { contentType: "text/javascript; charset=utf-8", body: utf8.encode("run()"), cacheControl: IMMUTABLE }],
  ["plain.css", { contentType: "text/css; charset=utf-8", body: utf8.encode("body{}") }]
])
const handler = makeHttpHandler({ runtime, docs })

// docs/api.md, "Headers on every response": a static file says its own Cache-Control, default no-store; the other
// common headers stay.
describe("static files (the docs option)", () => {
  it.each([
    ["GET", "/api/docs", "no-cache"],
    ["GET", "/api/docs/app.js", IMMUTABLE],
    ["HEAD", "/api/docs/app.js", IMMUTABLE],
    ["GET", "/api/docs/plain.css", "no-store"],
    ["GET", "/api/openapi.json", "no-store"]
  ])("%s %s: Cache-Control %s, with nosniff and a request id", async (method, path, cacheControl) => {
    const response = await handler({ method, path, headers: { "x-request-id": "static-1" } })
    expect(response.status).toBe(200)
    expect(response.headers).toMatchObject({
      "cache-control": cacheControl,
      "x-content-type-options": "nosniff",
      "x-request-id": "static-1"
    })
  })

  it("a missing file, OPTIONS and a refused method stay no-store problems or empty answers", async () => {
    for (const [method, path] of [
      ["GET", "/api/docs/missing.js"],
      ["OPTIONS", "/api/docs/app.js"],
      ["POST", "/api/docs/app.js"]
    ] as const) {
      const response = await handler({ method, path, headers: {} })
      expect(response.status, `${method} ${path}`).not.toBe(200)
      expect(response.headers["cache-control"], `${method} ${path}`).toBe("no-store")
    }
  })
})

// docs/api.md, "The docs page's files": a file with `encodings` is sent in the coding Accept-Encoding prefers, with
// Vary and a strong ETag per coding. The codings here are stand-in bytes: the core picks, it never compresses.
describe("negotiated static files (encodings)", () => {
  const body = utf8.encode("x".repeat(2000))
  const br = utf8.encode("BROTLI")
  const gzip = utf8.encode("GZIP!!!")
  const negotiated: DocsAssets = new Map([
    ["big.js", { contentType: "text/javascript", body, cacheControl: IMMUTABLE, encodings: { br, gzip } }],
    ["gz.js", { contentType: "text/javascript", body, encodings: { gzip } }],
    ["tiny.js", { contentType: "text/javascript", body: utf8.encode("t()"), encodings: {} }],
    ["plain.js", { contentType: "text/javascript", body: utf8.encode("p()") }]
  ])
  const serve = makeHttpHandler({ runtime, docs: negotiated })
  const get = (path: string, headers: Record<string, string> = {}, method = "GET") =>
    serve({ method, path: `/api/docs/${path}`, headers: { "x-request-id": "enc-1", ...headers } })
  const bytes = (response: { readonly body?: string | Uint8Array | undefined }) =>
    typeof response.body === "string" ? response.body : new TextDecoder().decode(response.body)

  it.each([
    [undefined, undefined],
    ["", undefined],
    ["gzip, deflate, br, zstd", "br"],
    ["br", "br"],
    ["gzip", "gzip"],
    ["x-gzip", "gzip"],
    ["GZIP", "gzip"],
    ["deflate", undefined],
    ["identity", undefined],
    ["*", "br"],
    ["br;q=0, *", "gzip"],
    ["*;q=0", undefined],
    ["br;q=0, gzip;q=0", undefined],
    ["gzip;q=1, br;q=0.5", "gzip"],
    ["gzip;q=0.8, br;q=0.8", "br"],
    ["br;q=0.001", "br"],
    ["br;q=0.0000", undefined],
    ["br;q=2", undefined],
    ["br;q=abc, gzip", "gzip"],
    ["br ; q=0.5 , gzip ; Q=0.4", "br"],
    [`${"x".repeat(1100)}, br`, undefined]
  ])("Accept-Encoding %j: %s", async (acceptEncoding, coding) => {
    const response = await get("big.js", acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding })
    expect(response.status).toBe(200)
    expect(response.headers["content-encoding"]).toBe(coding)
    expect(response.headers["vary"]).toBe("Accept-Encoding")
    expect(bytes(response)).toBe(coding === "br" ? "BROTLI" : coding === "gzip" ? "GZIP!!!" : "x".repeat(2000))
  })

  it("several Accept-Encoding lines are one list", async () => {
    const response = await serve({
      method: "GET",
      path: "/api/docs/big.js",
      headers: { get: (name: string) => (name === "accept-encoding" ? "identity, br;q=0.1, gzip" : null) }
    })
    expect(response.headers["content-encoding"]).toBe("gzip")
  })

  it("only a coding the file has: br asked of a gzip-only file is identity", async () => {
    expect((await get("gz.js", { "accept-encoding": "br" })).headers["content-encoding"]).toBeUndefined()
    expect((await get("gz.js", { "accept-encoding": "br, gzip" })).headers["content-encoding"]).toBe("gzip")
  })

  it("each coding has its own strong ETag; If-None-Match with it is 304 with ETag, Vary and Cache-Control", async () => {
    const identity = await get("big.js")
    const brotli = await get("big.js", { "accept-encoding": "br" })
    const gzipped = await get("big.js", { "accept-encoding": "gzip" })
    const tags = [identity, brotli, gzipped].map((response) => response.headers["etag"])
    expect(new Set(tags).size).toBe(3)
    for (const tag of tags) expect(tag).toMatch(/^"[0-9a-f]{16}-[0-9a-f]+(-br|-gzip)?"$/)
    const notModified = await get("big.js", { "accept-encoding": "br", "if-none-match": brotli.headers["etag"] ?? "" })
    expect(notModified.status).toBe(304)
    expect(notModified.body).toBeUndefined()
    expect(notModified.headers).toMatchObject({
      etag: brotli.headers["etag"],
      vary: "Accept-Encoding",
      "cache-control": IMMUTABLE
    })
    expect(notModified.headers["content-encoding"]).toBeUndefined()
    // The br tag does not match the gzip representation: that client gets the full gzip body.
    const other = await get("big.js", { "accept-encoding": "gzip", "if-none-match": brotli.headers["etag"] ?? "" })
    expect(other.status).toBe(200)
    expect(other.headers["content-encoding"]).toBe("gzip")
    const weak = await get("big.js", { "if-none-match": `W/${identity.headers["etag"] ?? ""}` })
    expect(weak.status).toBe(304)
  })

  it("HEAD has GET's headers, Content-Length of the coding it would send", async () => {
    for (const acceptEncoding of ["br", "gzip", "identity"]) {
      const getResponse = await get("big.js", { "accept-encoding": acceptEncoding })
      const head = await get("big.js", { "accept-encoding": acceptEncoding }, "HEAD")
      expect(head.body).toBeUndefined()
      expect(head.headers["content-length"]).toBe(String((getResponse.body as Uint8Array).byteLength))
      const { "content-length": _length, ...rest } = head.headers
      expect(rest).toEqual(getResponse.headers)
    }
  })

  it("a file with empty encodings is still negotiated (Vary, ETag); one without is sent as before", async () => {
    const tiny = await get("tiny.js", { "accept-encoding": "br" })
    expect(tiny.headers["content-encoding"]).toBeUndefined()
    expect(tiny.headers["vary"]).toBe("Accept-Encoding")
    expect(tiny.headers["etag"]).toMatch(/^"[0-9a-f]{16}-3"$/)
    const plain = await get("plain.js", { "accept-encoding": "br" })
    expect(plain.headers["vary"]).toBeUndefined()
    expect(plain.headers["etag"]).toBeUndefined()
    expect(plain.headers["content-encoding"]).toBeUndefined()
  })

  it("with CORS, Vary names Origin and Accept-Encoding", async () => {
    const cors = makeHttpHandler({ runtime, docs: negotiated, corsOrigins: ["https://app.example"] })
    const response = await cors({
      method: "GET",
      path: "/api/docs/big.js",
      headers: { origin: "https://app.example", "accept-encoding": "br" }
    })
    expect(response.headers["vary"]).toBe("Origin, Accept-Encoding")
    expect(response.headers["access-control-allow-origin"]).toBe("https://app.example")
  })
})
