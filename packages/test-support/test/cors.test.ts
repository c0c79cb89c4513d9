import { startExpressServer } from "@accord/adapter-express"
import { startFastifyServer } from "@accord/adapter-fastify"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { startKoaServer } from "@accord/adapter-koa"
import { send } from "@accord/conformance"
import { startWith, type StartAdapter } from "@accord/test-support"
import type { RawRequest, RawResponse } from "@accord/conformance"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

// docs/api.md, "CORS" and "Conditional requests" (`--require-if-match`): options of the handler, so every adapter
// answers alike; these are not audits because a deployment under audit may run with either setting.

const USER = "cors-user-token"
const seed = {
  users: [{ id: "cors_u1", token: USER }],
  payment_methods: [{ id: "cors_pm", user_id: "cors_u1", is_default: false }]
}
const ALLOWED = "http://app.example.test:5173"
const OTHER = "http://evil.example.test"
const EXPOSED =
  "X-Request-Id, ETag, Retry-After, RateLimit, RateLimit-Policy, WWW-Authenticate, Deprecation, Sunset, Link"
const ALLOW_HEADERS = "Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID, X-Request-Id"
const PREFERENCES = "/api/users/v1/preferences/language/"

const adapters: ReadonlyArray<readonly [string, StartAdapter]> = [
  ["koa", startKoaServer],
  ["fastify", startFastifyServer],
  ["express", startExpressServer],
  ["fetch", startFetchServer]
]

const cors = (res: RawResponse) =>
  Object.fromEntries(
    Object.entries(res.headers).filter(([name]) => name.startsWith("access-control-") || name === "vary")
  )

/** The answers that matter, per adapter, with the per-request id masked: what parity compares. */
const observe = async (url: string) => {
  const call = (request: RawRequest) => send(url, request)
  const bearer = { Authorization: `Bearer ${USER}` }
  const shown = (res: RawResponse) => ({ status: res.status, cors: cors(res), allow: res.headers["allow"] })
  return {
    preflight: shown(
      await call({
        method: "OPTIONS",
        path: PREFERENCES,
        headers: {
          Origin: ALLOWED,
          "Access-Control-Request-Method": "PUT",
          "Access-Control-Request-Headers": "authorization, content-type, if-match"
        }
      })
    ),
    preflightOtherOrigin: shown(
      await call({
        method: "OPTIONS",
        path: PREFERENCES,
        headers: { Origin: OTHER, "Access-Control-Request-Method": "PUT" }
      })
    ),
    preflightUnservedMethod: shown(
      await call({
        method: "OPTIONS",
        path: PREFERENCES,
        headers: { Origin: ALLOWED, "Access-Control-Request-Method": "DELETE" }
      })
    ),
    get: shown(await call({ method: "GET", path: PREFERENCES, headers: { ...bearer, Origin: ALLOWED } })),
    getOtherOrigin: shown(await call({ method: "GET", path: PREFERENCES, headers: { ...bearer, Origin: OTHER } })),
    getWithoutOrigin: shown(await call({ method: "GET", path: PREFERENCES, headers: bearer })),
    // The origin of a sandboxed frame or a file: page: an origin like any other, not in this list.
    getNullOrigin: shown(await call({ method: "GET", path: PREFERENCES, headers: { ...bearer, Origin: "null" } })),
    unauthenticated: shown(await call({ method: "GET", path: PREFERENCES, headers: { Origin: ALLOWED } })),
    notFound: shown(await call({ method: "GET", path: "/api/nothing", headers: { Origin: ALLOWED } })),
    putWithoutIfMatch: await call({
      method: "PUT",
      path: PREFERENCES,
      headers: { ...bearer, "Content-Type": "application/json", Origin: ALLOWED },
      body: "{}"
    }).then((res) => ({ ...shown(res), body: res.body.toString("utf8"), etag: res.headers["etag"] })),
    putWithIfMatch: await call({
      method: "PUT",
      path: PREFERENCES,
      headers: { ...bearer, "Content-Type": "application/json", "If-Match": "*" },
      body: "{}"
    }).then((res) => ({ status: res.status, etag: res.headers["etag"] !== undefined })),
    setDefaultWithoutIfMatch: (
      await call({ method: "PUT", path: "/api/payments/v1/payment-methods/cors_pm/", headers: bearer })
    ).status
  }
}

describe.each(adapters)("CORS and --require-if-match on %s", (_name, start) => {
  let url = ""
  let close = async () => {}
  let off = { url: "", close: async () => {} }
  beforeAll(async () => {
    ;({ url, close } = await startWith(start, { corsOrigins: [ALLOWED], requireIfMatch: true })(seed))
    off = await startWith(start)(seed)
  })
  afterAll(async () => {
    await close()
    await off.close()
  })

  it("answers a preflight from an allowed origin, and every answer to it; only Vary: Origin to any other", async () => {
    const seen = await observe(url)
    const allowed = { "access-control-allow-origin": ALLOWED, "access-control-expose-headers": EXPOSED, vary: "Origin" }
    expect(seen.preflight).toEqual({
      status: 204,
      allow: "GET, HEAD, OPTIONS, PUT",
      cors: {
        "access-control-allow-origin": ALLOWED,
        "access-control-expose-headers": EXPOSED,
        "access-control-allow-methods": "GET, HEAD, OPTIONS, PUT",
        "access-control-allow-headers": ALLOW_HEADERS,
        "access-control-max-age": "600",
        vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
      }
    })
    // Every answer varies on Origin, those to other origins or to none too (docs/SECURITY.md, item 37).
    const refused = { vary: "Origin" }
    for (const preflight of [seen.preflightOtherOrigin, seen.preflightUnservedMethod])
      expect(preflight).toEqual({ status: 204, allow: "GET, HEAD, OPTIONS, PUT", cors: refused })
    expect(seen.get).toEqual({ status: 200, cors: allowed, allow: undefined })
    for (const other of [seen.getOtherOrigin, seen.getWithoutOrigin, seen.getNullOrigin])
      expect(other).toEqual({ status: 200, cors: refused, allow: undefined })
    expect(seen.unauthenticated).toEqual({ status: 401, cors: allowed, allow: undefined })
    expect(seen.notFound).toEqual({ status: 404, cors: allowed, allow: undefined })
    expect(Object.keys(seen.preflight.cors)).not.toContain("access-control-allow-credentials")
  })

  it("with --require-if-match, a PUT of the preferences without If-Match is 428 and one with it goes on", async () => {
    const seen = await observe(url)
    expect(seen.putWithoutIfMatch.status).toBe(428)
    expect(JSON.parse(seen.putWithoutIfMatch.body)).toMatchObject({
      status: 428,
      code: "precondition_required",
      title: "Precondition Required"
    })
    expect(seen.putWithoutIfMatch.etag).toBeUndefined()
    expect(seen.putWithoutIfMatch.cors["access-control-allow-origin"]).toBe(ALLOWED)
    expect(seen.putWithIfMatch).toEqual({ status: 200, etag: true })
    // Only the preferences' PUT may be required to be conditional (docs/api.md, "Conditional requests").
    expect(seen.setDefaultWithoutIfMatch).toBe(200)
  })

  it("is off by default: no Access-Control-* header at all, and a PUT without If-Match is served", async () => {
    const seen = await observe(off.url)
    for (const answer of [seen.preflight, seen.get, seen.getWithoutOrigin, seen.unauthenticated, seen.notFound])
      expect(answer.cors).toEqual({})
    expect(seen.preflight.status).toBe(204)
    expect(seen.putWithoutIfMatch.status).toBe(200)
  })
})
