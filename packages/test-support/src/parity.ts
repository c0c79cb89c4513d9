import type { SeedInput } from "@accord/domain"
import {
  paths,
  randomSuffix,
  randomToken,
  REQUEST_ID_PATTERN,
  send,
  toAliasPath,
  UNSENT_BODY_TIMEOUT_MS,
  withoutSlash,
  type RawRequest,
  type RawResponse
} from "@accord/conformance"

/**
 * Adapter parity: the same raw requests, in the same order, against two servers, reduced to what the contract says
 * must be identical (status, a fixed set of headers, body bytes). The corpus is replayable: each response depends
 * only on earlier requests of the same corpus, so running it on A and then on B gives equal results whether the two
 * servers have separate stores (seeded alike) or share one database.
 */

export interface ParityFixture {
  readonly seed: SeedInput
  readonly run: string
  readonly user: { readonly id: string; readonly token: string }
  readonly otherUser: { readonly id: string; readonly token: string }
  readonly client: { readonly id: string; readonly token: string }
  readonly methods: ReadonlyArray<string>
  readonly otherMethod: string
}

export interface ParityCase {
  readonly name: string
  readonly request: RawRequest
}

/** The headers whose values the contract fixes; anything else may differ between frameworks. */
export const PARITY_HEADERS = [
  "content-type",
  "cache-control",
  "x-content-type-options",
  "www-authenticate",
  "allow",
  "retry-after",
  "content-encoding",
  "vary"
] as const

export interface ComparableResponse {
  readonly name: string
  readonly status: number
  /** Only the headers of PARITY_HEADERS that were present. */
  readonly headers: Readonly<Record<string, string>>
  /** `echoed` (the valid id sent), `generated` (a valid fresh one), or the offending value. */
  readonly requestId: string
  /** The body as UTF-8 (base64 when it is not valid UTF-8), with timestamps and preference ids masked. */
  readonly body: string
}

/** A seed for the corpus; give both servers the same one (ids and tokens are random per call). */
export const makeParityFixture = (): ParityFixture => {
  const run = randomSuffix()
  const user = { id: `parity_user_${run}`, token: randomToken(`parity-user-${run}`) }
  const otherUser = { id: `parity_other_${run}`, token: randomToken(`parity-other-${run}`) }
  const client = { id: `parity_client_${run}`, token: randomToken(`parity-client-${run}`) }
  const methods = [`B${run}`, `a${run}`, `_${run}`, `-${run}`, `0${run}`]
  const otherMethod = `o${run}`
  const seed: SeedInput = {
    users: [user, otherUser],
    clients: [client],
    payment_methods: [
      ...methods.map((id, index) => ({ id, user_id: user.id, is_default: index === 0 })),
      { id: otherMethod, user_id: otherUser.id, is_default: true }
    ]
  }
  return { seed, run, user, otherUser, client, methods, otherMethod }
}

const nestedArrays = (field: string, depth: number): string =>
  `{"${field}":${"[".repeat(depth - 1)}${"]".repeat(depth - 1)}}`

/** Successes and every error class the contract names, in a replayable order. */
export const parityCorpus = (fixture: ParityFixture): ReadonlyArray<ParityCase> => {
  const { run, user, otherUser, client, methods, otherMethod } = fixture
  const auth = { Authorization: `Bearer ${user.token}` }
  const json = { ...auth, "Content-Type": "application/json" }
  const clientAuth = { Authorization: `Bearer ${client.token}` }
  const otherAuth = { Authorization: `Bearer ${otherUser.token}` }
  const first = methods[0] ?? ""
  const second = methods[1] ?? ""
  const put = (body: string | Uint8Array, headers: Record<string, string> = json): RawRequest => ({
    method: "PUT",
    path: paths.preferences,
    headers,
    body
  })
  const cases: Array<ParityCase> = [
    // Public routes.
    { name: "health", request: { method: "GET", path: paths.health } },
    { name: "health HEAD", request: { method: "HEAD", path: paths.health } },
    { name: "liveness", request: { method: "GET", path: paths.live } },
    { name: "readiness", request: { method: "GET", path: paths.ready } },
    {
      name: "health with a bad token",
      request: { method: "GET", path: paths.health, headers: { Authorization: "Bearer $" } }
    },
    { name: "openapi.json", request: { method: "GET", path: paths.openapi } },
    { name: "docs", request: { method: "GET", path: paths.docs } },
    // The docs page's files as precompressed: every binding passes the coding's bytes and headers through.
    ...[
      ["br", "GET"],
      ["gzip", "GET"],
      ["br;q=0, gzip;q=0", "GET"],
      ["br", "HEAD"]
    ].map(([acceptEncoding = "", method = ""]): ParityCase => ({
      name: `docs stylesheet ${method} ${acceptEncoding}`,
      request: { method, path: `${paths.docs}/swagger-ui.css`, headers: { "Accept-Encoding": acceptEncoding } }
    })),
    // Plan entries.
    {
      name: "plan entry",
      request: {
        method: "POST",
        path: paths.planEntries,
        headers: json,
        body: JSON.stringify({ email: ` Parity.${run}@Example.COM `, password: "password-1" })
      }
    },
    {
      name: "plan entry duplicate",
      request: {
        method: "POST",
        path: paths.planEntries,
        headers: json,
        body: JSON.stringify({ email: `PARITY.${run}@example.com`, password: "password-2" })
      }
    },
    {
      name: "plan entry as client, no slash",
      request: {
        method: "POST",
        path: withoutSlash(paths.planEntries),
        headers: { ...clientAuth, "Content-Type": "application/json" },
        body: JSON.stringify({ email: `client.${run}@example.org`, password: "😀".repeat(8) })
      }
    },
    {
      name: "plan entry field errors",
      request: {
        method: "POST",
        path: paths.planEntries,
        headers: json,
        body: '{"email":"a..b@example","password":"short","x":1}'
      }
    },
    {
      name: "plan entry missing fields",
      request: { method: "POST", path: paths.planEntries, headers: json, body: "{}" }
    },
    { name: "plan entry no body", request: { method: "POST", path: paths.planEntries, headers: auth } },
    // Preferences: the first request sets every field, so a replay on a shared store answers the same.
    { name: "preferences set all", request: put('{"language":"EN-us","timezone":60.0,"mfa_enabled":true}') },
    { name: "preferences GET", request: { method: "GET", path: paths.preferences, headers: auth } },
    {
      name: "preferences GET no slash",
      request: { method: "GET", path: withoutSlash(paths.preferences), headers: auth }
    },
    { name: "preferences HEAD", request: { method: "HEAD", path: paths.preferences, headers: auth } },
    { name: "preferences {}", request: put("{}") },
    { name: "preferences read-only ignored", request: put('{"id":"x","created_at":1,"updated_at":null}') },
    {
      name: "preferences merge",
      request: put('{"timezone":-120}', { ...auth, "Content-Type": 'Application/JSON; charset="UTF8"' })
    },
    { name: "preferences alias", request: put('{"language":"iw"}') },
    { name: "preferences field errors", request: put('{"language":"en_US","timezone":61,"mfa_enabled":"true","x":1}') },
    { name: "preferences 1e400", request: put('{"timezone":1e400}') },
    { name: "preferences out of range", request: put('{"timezone":855}') },
    { name: "preferences too long tag", request: put(JSON.stringify({ language: "x".repeat(36) })) },
    {
      name: "preferences GET with a body",
      request: {
        method: "GET",
        path: paths.preferences,
        headers: { ...auth, "Content-Type": "text/plain" },
        body: "ignored"
      }
    },
    // Bodies.
    { name: "invalid JSON", request: put('{"language":') },
    { name: "empty body", request: put("") },
    { name: "no body", request: { method: "PUT", path: paths.preferences, headers: auth } },
    { name: "BOM", request: put(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("{}")])) },
    {
      name: "invalid UTF-8",
      request: put(Buffer.concat([Buffer.from('{"language":"'), Buffer.from([0xff]), Buffer.from('"}')]))
    },
    { name: "duplicate key", request: put('{"timezone":0,"timezone":60}') },
    { name: "duplicate nested key", request: put('{"id":{"a":1,"a":1}}') },
    { name: "__proto__ key", request: put('{"__proto__":{"mfa_enabled":true}}') },
    { name: "constructor key nested", request: put('{"id":[{"constructor":1}]}') },
    { name: "32 levels", request: put(nestedArrays("language", 32)) },
    { name: "33 levels", request: put(nestedArrays("language", 33)) },
    { name: "array body", request: put("[]") },
    { name: "null body", request: put("null") },
    { name: "no Content-Type", request: put("{}", auth) },
    { name: "text/plain", request: put("{}", { ...auth, "Content-Type": "text/plain" }) },
    { name: "charset latin1", request: put("{}", { ...auth, "Content-Type": "application/json; charset=latin1" }) },
    { name: "merge-patch+json", request: put("{}", { ...auth, "Content-Type": "application/merge-patch+json" }) },
    {
      name: "chunked without Content-Type",
      request: { method: "PUT", path: paths.preferences, headers: auth, chunks: ["{", "}"] }
    },
    { name: "16384 bytes", request: put(`{"language":"fr"${" ".repeat(16_384 - 17)}}`) },
    { name: "16385 bytes", request: put(`{"language":"de"${" ".repeat(16_385 - 17)}}`) },
    {
      name: "10 MB declared",
      request: {
        method: "PUT",
        path: paths.preferences,
        headers: json,
        body: "{",
        declaredLength: 10 * 1024 * 1024,
        timeoutMs: UNSENT_BODY_TIMEOUT_MS
      }
    },
    {
      name: "chunked over the limit",
      request: {
        method: "PUT",
        path: paths.preferences,
        headers: json,
        chunks: ["{", " ".repeat(9_000), " ".repeat(9_000), "}"]
      }
    },
    { name: "text/plain over the limit", request: put("x".repeat(20_000), { ...auth, "Content-Type": "text/plain" }) },
    // Credentials.
    { name: "no credentials", request: { method: "GET", path: paths.preferences } },
    {
      name: "empty Authorization",
      request: { method: "GET", path: paths.preferences, headers: { Authorization: "" } }
    },
    { name: "Basic", request: { method: "GET", path: paths.preferences, headers: { Authorization: "Basic eDp5" } } },
    {
      name: "Bearer without token",
      request: { method: "GET", path: paths.preferences, headers: { Authorization: "Bearer" } }
    },
    {
      name: "malformed token",
      request: { method: "GET", path: paths.preferences, headers: { Authorization: "Bearer a$b" } }
    },
    {
      name: "513-character token",
      request: { method: "GET", path: paths.preferences, headers: { Authorization: `Bearer ${"a".repeat(513)}` } }
    },
    {
      name: "unknown token",
      request: { method: "GET", path: paths.preferences, headers: { Authorization: `Token unknown-${run}` } }
    },
    {
      name: "scheme in odd case, extra spaces",
      request: { method: "GET", path: paths.preferences, headers: { Authorization: `tOKEN   ${user.token}` } }
    },
    {
      name: "unauthenticated with 10 MB declared",
      request: {
        method: "PUT",
        path: paths.preferences,
        headers: { "Content-Type": "application/json" },
        body: "{",
        declaredLength: 10 * 1024 * 1024,
        timeoutMs: UNSENT_BODY_TIMEOUT_MS
      }
    },
    {
      name: "client on a user route",
      request: {
        method: "PUT",
        path: paths.preferences,
        headers: { ...clientAuth, "Content-Type": "text/plain" },
        body: "x"
      }
    },
    { name: "client on the list", request: { method: "GET", path: paths.paymentMethods, headers: clientAuth } },
    // Payment methods.
    { name: "list", request: { method: "GET", path: paths.paymentMethods, headers: auth } },
    { name: "set default, no body", request: { method: "PUT", path: paths.paymentMethod(second), headers: auth } },
    {
      name: "set default again, {}",
      request: { method: "PUT", path: paths.paymentMethod(second), headers: json, body: "{}" }
    },
    {
      name: "set default, zero bytes text/plain",
      request: {
        method: "PUT",
        path: paths.paymentMethod(second),
        headers: { ...auth, "Content-Type": "text/plain" },
        body: ""
      }
    },
    { name: "list after", request: { method: "GET", path: paths.paymentMethods, headers: auth } },
    {
      name: "set default back, no slash",
      request: {
        method: "PUT",
        path: withoutSlash(paths.paymentMethod(first)),
        headers: json,
        body: '{"is_default":true}'
      }
    },
    { name: "list back", request: { method: "GET", path: withoutSlash(paths.paymentMethods), headers: auth } },
    {
      name: "is_default false",
      request: { method: "PUT", path: paths.paymentMethod(second), headers: json, body: '{"is_default":false,"y":2}' }
    },
    {
      name: "another user's method",
      request: { method: "PUT", path: paths.paymentMethod(otherMethod), headers: auth }
    },
    { name: "unknown method", request: { method: "PUT", path: paths.paymentMethod(`unknown_${run}`), headers: auth } },
    { name: "id outside the charset", request: { method: "PUT", path: paths.paymentMethod("pm.1"), headers: auth } },
    { name: "id outside the charset, no credentials", request: { method: "PUT", path: paths.paymentMethod("pm%201") } },
    {
      name: "other user's list",
      request: { method: "GET", path: paths.paymentMethods, headers: otherAuth }
    },
    // Routes and methods.
    // The events the writes above recorded (docs/api.md, "Events"): the same envelopes, in the same order.
    { name: "events", request: { method: "GET", path: paths.events, headers: auth } },
    { name: "events, a page of 2", request: { method: "GET", path: `${paths.events}?limit=2`, headers: auth } },
    { name: "events HEAD, no slash", request: { method: "HEAD", path: withoutSlash(paths.events), headers: auth } },
    { name: "events, limit 0", request: { method: "GET", path: `${paths.events}?limit=0`, headers: auth } },
    {
      name: "events, an unknown parameter",
      request: { method: "GET", path: `${paths.events}?limit=2&page=2`, headers: auth }
    },
    {
      name: "events, a cursor that is no event",
      request: { method: "GET", path: `${paths.events}?after=${UNKNOWN_EVENT_ID}`, headers: auth }
    },
    { name: "events as client", request: { method: "GET", path: paths.events, headers: clientAuth } },
    { name: "other user's events", request: { method: "GET", path: paths.events, headers: otherAuth } },
    { name: "root", request: { method: "GET", path: "/" } },
    { name: "/api", request: { method: "GET", path: "/api" } },
    {
      name: "unknown under /api",
      request: { method: "POST", path: "/api/nope", headers: { "Content-Type": "text/plain" }, body: "x" }
    },
    { name: "health with slash", request: { method: "GET", path: "/api/health/" } },
    { name: "openapi.json with slash", request: { method: "GET", path: "/api/openapi.json/" } },
    { name: "DELETE preferences", request: { method: "DELETE", path: paths.preferences } },
    { name: "PUT list", request: { method: "PUT", path: paths.paymentMethods, headers: auth } },
    { name: "GET a payment method", request: { method: "GET", path: paths.paymentMethod(first), headers: auth } },
    { name: "HEAD a payment method", request: { method: "HEAD", path: paths.paymentMethod(first) } },
    { name: "POST health", request: { method: "POST", path: paths.health } },
    { name: "OPTIONS preferences", request: { method: "OPTIONS", path: paths.preferences } },
    {
      name: "OPTIONS payment method, bad token",
      request: { method: "OPTIONS", path: paths.paymentMethod(first), headers: { Authorization: "Bearer $" } }
    },
    { name: "OPTIONS plan entries no slash", request: { method: "OPTIONS", path: withoutSlash(paths.planEntries) } },
    // Request ids.
    {
      name: "valid request id",
      request: { method: "GET", path: paths.health, headers: { "X-Request-Id": `parity.${run}_X-1` } }
    },
    {
      name: "too long request id",
      request: { method: "GET", path: "/api/nope", headers: { "X-Request-Id": "r".repeat(129) } }
    },
    {
      name: "invalid request id",
      request: { method: "DELETE", path: paths.health, headers: { "X-Request-Id": "a b" } }
    }
  ]
  return cases
}

const TIMESTAMP = /"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z"/g
// Event ids are UUIDv7s, made where each event is recorded.
/**
 * The corpus with every request to an operation that has a deprecated alias sent to the alias instead (docs/api.md,
 * "Versioning"): run against a server seeded alike, its answers reduce to the corpus's own (`comparable` keeps no
 * deprecation header). `aliased` names the cases rewritten.
 */
export const aliasParityCorpus = (
  corpus: ReadonlyArray<ParityCase>,
  prefix = "/api"
): { readonly corpus: ReadonlyArray<ParityCase>; readonly aliased: ReadonlyArray<string> } => {
  const aliased: Array<string> = []
  const rewritten = corpus.map((parityCase) => {
    const path = toAliasPath(prefix, parityCase.request.path)
    if (path === undefined) return parityCase
    aliased.push(parityCase.name)
    return { ...parityCase, request: { ...parityCase.request, path } }
  })
  return { corpus: rewritten, aliased }
}

const UUID = /"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"/g
/** A well-formed UUIDv7 that no store made: a cursor that names no event. */
const UNKNOWN_EVENT_ID = "00000000-0000-7000-8000-000000000000"
// Preference record ids come from each store's sequence; payment-method ids are strings and stay.
const INTEGER_ID = /"id":-?\d+(?=[,}])/g

const bodyText = (body: Buffer): string => {
  const decoded = new TextDecoder("utf-8", { fatal: false }).decode(body)
  return Buffer.from(decoded, "utf8").equals(body) ? decoded : `base64:${body.toString("base64")}`
}

/** Reduces a response to what must be equal across adapters. */
export const comparable = (parityCase: ParityCase, response: RawResponse): ComparableResponse => {
  const headers: Record<string, string> = {}
  for (const name of PARITY_HEADERS) {
    const value = response.headers[name]
    if (value !== undefined) headers[name] = value
  }
  const sentId = Object.entries(parityCase.request.headers ?? {}).find(
    ([name]) => name.toLowerCase() === "x-request-id"
  )?.[1]
  const receivedId = response.headers["x-request-id"]
  const requestId =
    receivedId === undefined
      ? "missing"
      : sentId !== undefined && REQUEST_ID_PATTERN.test(sentId) && receivedId === sentId
        ? "echoed"
        : REQUEST_ID_PATTERN.test(receivedId) && receivedId !== sentId
          ? "generated"
          : receivedId
  return {
    name: parityCase.name,
    status: response.status,
    headers,
    requestId,
    body: bodyText(response.body)
      .replace(TIMESTAMP, '"<timestamp>"')
      .replace(INTEGER_ID, '"id":"<integer>"')
      .replace(UUID, '"<uuid>"')
  }
}

/** Sends every case, one at a time, and reduces each answer. A request that gets no answer is recorded as status 0. */
export const runCorpus = async (
  baseUrl: string,
  corpus: ReadonlyArray<ParityCase>
): Promise<ReadonlyArray<ComparableResponse>> => {
  const results: Array<ComparableResponse> = []
  for (const parityCase of corpus) {
    try {
      results.push(comparable(parityCase, await send(baseUrl, parityCase.request)))
    } catch (error) {
      results.push({
        name: parityCase.name,
        status: 0,
        headers: {},
        requestId: "missing",
        body: `no response: ${String(error)}`
      })
    }
  }
  return results
}

/**
 * The same corpus against `a`, then against `b`. Compare the two arrays with a deep equality; the names make a
 * failing entry easy to find.
 */
export const compareServers = async (
  a: string,
  b: string,
  corpus: ReadonlyArray<ParityCase>
): Promise<{ readonly a: ReadonlyArray<ComparableResponse>; readonly b: ReadonlyArray<ComparableResponse> }> => ({
  a: await runCorpus(a, corpus),
  b: await runCorpus(b, corpus)
})
