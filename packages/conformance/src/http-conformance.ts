import type { RunningServer, SeedInput } from "@accord/core"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import {
  paths,
  randomSuffix,
  randomToken,
  reasonPhrases,
  REQUEST_ID_PATTERN,
  TIMESTAMP_PATTERN,
  withoutSlash
} from "./paths.js"
import { send, type RawRequest, type RawResponse } from "./raw-http.js"
import { exchange } from "./raw-socket.js"

/** Starts the server under test with `seed` loaded; the API must be mounted at `/api`. */
export type StartServer = (seed: SeedInput) => Promise<RunningServer>

// ---------------------------------------------------------------------------------------------------------------
// Fixture: one seed per run, every id and token random so the suite also runs against a shared database.

const USER_NAMES = [
  "pay", // five payment methods whose ids test code-point order
  "other", // one payment method, for ownership
  "conc", // ten payment methods, for the concurrency check
  "eq", // a 512-character token followed by "=="
  "auth",
  "pget",
  "pempty",
  "pput",
  "pmerge",
  "pro",
  "plang",
  "ptz",
  "pmfa",
  "pjson",
  "pmedia",
  "psize",
  "pslash"
] as const
type UserName = (typeof USER_NAMES)[number]

interface Credential {
  readonly id: string
  readonly token: string
}

interface Fixture {
  readonly run: string
  readonly seed: SeedInput
  readonly users: Readonly<Record<UserName, Credential>>
  readonly client: Credential
  /** The user "pay"'s methods in code-point order; `B…` is seeded as the default. */
  readonly payIds: ReadonlyArray<string>
  readonly payDefault: string
  readonly otherId: string
  readonly concIds: ReadonlyArray<string>
}

const makeFixture = (): Fixture => {
  const run = randomSuffix()
  const credential = (name: string): Credential => ({ id: `conf_${name}_${run}`, token: randomToken(`${name}-${run}`) })
  const users = {} as Record<UserName, Credential>
  for (const name of USER_NAMES) users[name] = credential(name)
  // 512 characters, the longest token the grammar allows, then padding that belongs to the token.
  users.eq = { id: `conf_eq_${run}`, token: `${randomBytes(384).toString("base64url")}==` }
  const client = { id: `conf_client_${run}`, token: randomToken(`client-${run}`) }
  // Code-point order: "-" < "0" < "B" < "_" < "a" (a locale collation would put "a" before "B" and ignore "-", "_").
  const payIds = [`-${run}`, `0${run}`, `B${run}`, `_${run}`, `a${run}`]
  const payDefault = `B${run}`
  const otherId = `o${run}`
  const concIds = Array.from({ length: 10 }, (_, index) => `c${index}_${run}`)
  const seed: SeedInput = {
    users: USER_NAMES.map((name) => ({ id: users[name].id, token: users[name].token })),
    clients: [client],
    payment_methods: [
      // Seeded out of order on purpose: the list must sort, not echo insertion order.
      ...[...payIds].reverse().map((id) => ({ id, user_id: users.pay.id, is_default: id === payDefault })),
      { id: otherId, user_id: users.other.id, is_default: true },
      ...concIds.map((id) => ({ id, user_id: users.conc.id, is_default: false }))
    ]
  }
  return { run, seed, users, client, payIds, payDefault, otherId, concIds }
}

// ---------------------------------------------------------------------------------------------------------------
// Expectations. Every helper checks the headers the contract puts on every response.

const STACK_TRACE =
  /\n\s+at |\bat [\w$.<>]+ \(|\.[cm]?[jt]s:\d+|node_modules|file:\/\/|\/work\/|\/home\/|\/usr\/|[A-Z]:\\/

const text = (res: RawResponse): string => res.body.toString("utf8")

const show = (label: string, res: RawResponse): string => `${label} -> ${res.status} ${text(res).slice(0, 400)}`

const expectCommonHeaders = (label: string, res: RawResponse, cacheControl = "no-store"): void => {
  expect(res.headers["cache-control"], `${label}: Cache-Control`).toBe(cacheControl)
  expect(res.headers["x-content-type-options"], `${label}: X-Content-Type-Options`).toBe("nosniff")
  expect(res.headers["x-request-id"], `${label}: X-Request-Id`).toMatch(REQUEST_ID_PATTERN)
}

/**
 * docs/api.md, "Headers on every response": a docs file whose URL carries a version (`?v=`) is cached for a year;
 * the page and its unversioned files are revalidated, so a new release shows at once.
 */
const VERSIONED_CACHE_CONTROL = "public, max-age=31536000, immutable"
const UNVERSIONED_CACHE_CONTROL = "no-cache"
const docsCacheControl = (target: URL): string =>
  target.searchParams.has("v") ? VERSIONED_CACHE_CONTROL : UNVERSIONED_CACHE_CONTROL

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const record = (label: string, value: unknown): Record<string, unknown> => {
  if (!isRecord(value)) throw new Error(`${label}: expected a JSON object, got ${JSON.stringify(value)}`)
  return value
}

const str = (label: string, value: unknown): string => {
  if (typeof value !== "string") throw new Error(`${label}: expected a string, got ${JSON.stringify(value)}`)
  return value
}

const parseJson = (label: string, res: RawResponse): unknown => {
  try {
    return JSON.parse(text(res))
  } catch {
    throw new Error(`${label}: body is not JSON: ${JSON.stringify(text(res).slice(0, 200))}`)
  }
}

/** A success with a JSON body: status, headers, and compact serialisation (no spaces, no duplicate keys). */
const expectJsonSuccess = (label: string, res: RawResponse, status: number, compact = true): unknown => {
  expect(res.status, show(label, res)).toBe(status)
  expectCommonHeaders(label, res)
  expect(res.headers["content-type"], `${label}: Content-Type`).toBe("application/json; charset=utf-8")
  const body = parseJson(label, res)
  if (compact) expect(text(res), `${label}: compact JSON`).toBe(JSON.stringify(body))
  return body
}

type FieldErrors = ReadonlyArray<readonly [pointer: string, code: string]>

interface ProblemExpectation {
  readonly status: number
  readonly code: string
  readonly errors?: FieldErrors
  readonly wwwAuthenticate?: string
  readonly allow?: string
  /** A HEAD request: the same status and headers, no body. */
  readonly head?: boolean
}

const expectProblem = (label: string, res: RawResponse, expected: ProblemExpectation): void => {
  expect(res.status, show(label, res)).toBe(expected.status)
  expectCommonHeaders(label, res)
  expect(res.headers["content-type"], `${label}: Content-Type`).toBe("application/problem+json; charset=utf-8")
  if (expected.wwwAuthenticate !== undefined) {
    expect(res.headers["www-authenticate"], `${label}: WWW-Authenticate`).toBe(expected.wwwAuthenticate)
  }
  if (expected.allow !== undefined) expect(res.headers["allow"], `${label}: Allow`).toBe(expected.allow)
  if (expected.head === true) {
    expect(res.body.length, `${label}: HEAD has no body`).toBe(0)
    return
  }
  expect(text(res), `${label}: no stack trace or file path`).not.toMatch(STACK_TRACE)
  const body = record(label, parseJson(label, res))
  const keys = ["type", "title", "status", "detail", "code", ...(expected.errors === undefined ? [] : ["errors"])]
  expect(Object.keys(body), `${label}: problem keys`).toEqual(keys)
  expect(body["type"], `${label}: type`).toBe("about:blank")
  expect(body["title"], `${label}: title`).toBe(reasonPhrases[expected.status])
  expect(body["status"], `${label}: status member`).toBe(expected.status)
  expect(str(`${label}: detail`, body["detail"]).length, `${label}: detail is not empty`).toBeGreaterThan(0)
  expect(body["code"], `${label}: code`).toBe(expected.code)
  if (expected.errors !== undefined) {
    const errors = body["errors"]
    if (!Array.isArray(errors)) throw new Error(`${label}: errors is not an array`)
    const seen = errors.map((entry: unknown, index) => {
      const error = record(`${label}: errors[${index}]`, entry)
      expect(Object.keys(error), `${label}: errors[${index}] keys`).toEqual(["pointer", "code", "detail"])
      expect(str(`${label}: errors[${index}].detail`, error["detail"]).length).toBeGreaterThan(0)
      return [error["pointer"], error["code"]]
    })
    expect(seen, `${label}: errors (pointer, code), sorted by pointer`).toEqual(expected.errors)
  }
}

const validation = (errors: FieldErrors): ProblemExpectation => ({ status: 400, code: "validation_failed", errors })
const INVALID_JSON: ProblemExpectation = { status: 400, code: "invalid_json" }
const INVALID_BODY: ProblemExpectation = { status: 400, code: "invalid_body" }
const NOT_FOUND: ProblemExpectation = { status: 404, code: "not_found" }
const TOO_LARGE: ProblemExpectation = { status: 413, code: "payload_too_large" }
const UNSUPPORTED: ProblemExpectation = { status: 415, code: "unsupported_media_type" }
const FORBIDDEN: ProblemExpectation = { status: 403, code: "insufficient_scope" }
const UNAUTHENTICATED: ProblemExpectation = {
  status: 401,
  code: "unauthenticated",
  wwwAuthenticate: 'Bearer realm="api"'
}
const INVALID_TOKEN: ProblemExpectation = {
  status: 401,
  code: "invalid_token",
  wwwAuthenticate: 'Bearer realm="api", error="invalid_token"'
}
const notAllowed = (allow: string, head = false): ProblemExpectation => ({
  status: 405,
  code: "method_not_allowed",
  allow,
  head
})

const expectTimestamp = (label: string, value: unknown): string => {
  const stamp = str(label, value)
  expect(stamp, `${label}: UTC ISO 8601 with milliseconds`).toMatch(TIMESTAMP_PATTERN)
  expect(new Date(stamp).toISOString(), `${label}: a real instant`).toBe(stamp)
  return stamp
}

interface Preferences {
  readonly id: number
  readonly language: string
  readonly timezone: number
  readonly mfa_enabled: boolean
  readonly created_at: string
  readonly updated_at: string
}

const expectPreferences = (
  label: string,
  res: RawResponse,
  values: Pick<Preferences, "language" | "timezone" | "mfa_enabled">
): Preferences => {
  const body = record(label, expectJsonSuccess(label, res, 200))
  expect(Object.keys(body), `${label}: keys`).toEqual([
    "id",
    "language",
    "timezone",
    "mfa_enabled",
    "created_at",
    "updated_at"
  ])
  const id = body["id"]
  if (typeof id !== "number" || !Number.isSafeInteger(id))
    throw new Error(`${label}: id is not an integer: ${String(id)}`)
  expect({ language: body["language"], timezone: body["timezone"], mfa_enabled: body["mfa_enabled"] }, label).toEqual(
    values
  )
  const created_at = expectTimestamp(`${label}: created_at`, body["created_at"])
  const updated_at = expectTimestamp(`${label}: updated_at`, body["updated_at"])
  expect(updated_at >= created_at, `${label}: updated_at >= created_at`).toBe(true)
  return { id, ...values, created_at, updated_at }
}

interface PaymentMethod {
  readonly id: string
  readonly is_default: boolean
  readonly created_at: string
  readonly updated_at: string
}

const paymentMethod = (label: string, value: unknown): PaymentMethod => {
  const body = record(label, value)
  expect(Object.keys(body), `${label}: keys`).toEqual(["id", "is_default", "created_at", "updated_at"])
  const isDefault = body["is_default"]
  if (typeof isDefault !== "boolean") throw new Error(`${label}: is_default is not a boolean`)
  return {
    id: str(`${label}: id`, body["id"]),
    is_default: isDefault,
    created_at: expectTimestamp(`${label}: created_at`, body["created_at"]),
    updated_at: expectTimestamp(`${label}: updated_at`, body["updated_at"])
  }
}

const expectPaymentMethodList = (label: string, res: RawResponse): ReadonlyArray<PaymentMethod> => {
  const body = record(label, expectJsonSuccess(label, res, 200))
  expect(Object.keys(body), `${label}: keys`).toEqual(["data"])
  const data = body["data"]
  if (!Array.isArray(data)) throw new Error(`${label}: data is not an array`)
  return data.map((entry: unknown, index) => paymentMethod(`${label}: data[${index}]`, entry))
}

/** `prefix`, then spaces, then `suffix`: a valid JSON document of exactly `bytes` bytes. */
const padded = (prefix: string, suffix: string, bytes: number): string => {
  const filler = bytes - Buffer.byteLength(prefix + suffix)
  if (filler < 0) throw new Error("padded: prefix and suffix are longer than the target size")
  return `${prefix}${" ".repeat(filler)}${suffix}`
}

const nested = (field: string, depth: number): string => {
  // The outermost object is level 1; the arrays inside the field take the remaining levels.
  const arrays = depth - 1
  return `{"${field}":${"[".repeat(arrays)}${"]".repeat(arrays)}}`
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>): Uint8Array =>
  Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part, "utf8") : Buffer.from(part))))

/** `src` of any element and `href` of anything but links (`<a>`): what a browser loads to render the page. */
const assetReferences = (html: string): ReadonlyArray<string> => {
  const references: Array<string> = []
  for (const tag of html.matchAll(/<([a-zA-Z][a-zA-Z0-9-]*)(\s[^>]*)?>/g)) {
    const tagName = (tag[1] ?? "").toLowerCase()
    for (const attribute of (tag[2] ?? "").matchAll(/\s(src|href)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi)) {
      if ((attribute[1] ?? "").toLowerCase() === "href" && tagName === "a") continue
      const value = (attribute[2] ?? attribute[3] ?? attribute[4] ?? "").replaceAll("&amp;", "&").trim()
      if (value === "" || value.startsWith("#") || /^(data|blob|javascript|about|mailto):/i.test(value)) continue
      references.push(value)
    }
  }
  return references
}

/** Follows a local `$ref` (`#/components/...`) in the OpenAPI document. */
const resolveRef = (document: Record<string, unknown>, value: unknown): unknown => {
  let current = value
  for (let hops = 0; hops < 10 && isRecord(current) && typeof current["$ref"] === "string"; hops++) {
    const ref = current["$ref"]
    if (!ref.startsWith("#/")) throw new Error(`non-local $ref ${ref}`)
    let target: unknown = document
    for (const segment of ref.slice(2).split("/")) {
      const key = segment.replaceAll("~1", "/").replaceAll("~0", "~")
      target = isRecord(target) ? target[key] : undefined
    }
    current = target
  }
  return current
}

// ---------------------------------------------------------------------------------------------------------------

/**
 * The HTTP contract (docs/api.md) as a black-box suite over real HTTP. Starts one server with a seed it builds,
 * closes it at the end. Not covered here because a black box cannot provoke them: 503 (store unreachable, hashing
 * saturated) and 500; the drain on close is the server package's test.
 */
export const runHttpConformance = (name: string, startServer: StartServer): void => {
  describe(`HTTP conformance: ${name}`, () => {
    const fx = makeFixture()
    const { users, client, run } = fx
    let server: RunningServer | undefined

    beforeAll(async () => {
      server = await startServer(fx.seed)
    }, 30_000)
    afterAll(async () => {
      await server?.close()
    }, 30_000)

    const baseUrl = (): string => {
      if (server === undefined) throw new Error("the server did not start")
      return server.url
    }
    const call = (request: RawRequest): Promise<RawResponse> => send(baseUrl(), request)
    const bearer = (user: Credential): Record<string, string> => ({ Authorization: `Bearer ${user.token}` })
    const jsonHeaders = (user: Credential, contentType = "application/json"): Record<string, string> => ({
      ...bearer(user),
      "Content-Type": contentType
    })
    const putPreferences = (user: Credential, body: string | Uint8Array, path: string = paths.preferences) =>
      call({ method: "PUT", path, headers: jsonHeaders(user), body })
    const getPreferences = (user: Credential, path: string = paths.preferences) =>
      call({ method: "GET", path, headers: bearer(user) })
    const postPlanEntry = (user: Credential, body: string, path: string = paths.planEntries) =>
      call({ method: "POST", path, headers: jsonHeaders(user), body })
    const listPaymentMethods = (user: Credential) =>
      call({ method: "GET", path: paths.paymentMethods, headers: bearer(user) })

    // -------------------------------------------------------------------------------------------------------------
    describe("health, OpenAPI document, docs page", () => {
      it('GET /api/health is 200 {"status":"ok"} without credentials', async () => {
        const res = await call({ method: "GET", path: paths.health })
        expectJsonSuccess("GET health", res, 200)
        expect(text(res)).toBe('{"status":"ok"}')
      })

      it('GET /api/health/live and /api/health/ready are 200 {"status":"ok"} without credentials', async () => {
        for (const path of [paths.live, paths.ready]) {
          const res = await call({ method: "GET", path })
          expectJsonSuccess(`GET ${path}`, res, 200)
          expect(text(res)).toBe('{"status":"ok"}')
        }
      })

      it("health and the probes ignore credentials, valid or not, and the query string", async () => {
        const headerSets: ReadonlyArray<Record<string, string>> = [
          { Authorization: "Bearer nope$nope" },
          { Authorization: "Basic dXNlcjpwYXNz" },
          { Authorization: `Bearer unknown-${run}` },
          bearer(client),
          bearer(users.auth)
        ]
        for (const path of [paths.health, paths.live, paths.ready]) {
          for (const headers of headerSets) {
            const res = await call({ method: "GET", path, headers })
            expectJsonSuccess(`GET ${path} with ${headers["Authorization"]}`, res, 200)
            expect(text(res)).toBe('{"status":"ok"}')
          }
          const withQuery = await call({ method: "GET", path: `${path}?verbose=1` })
          expectJsonSuccess(`GET ${path}?verbose=1`, withQuery, 200)
          expect(text(withQuery)).toBe('{"status":"ok"}')
        }
      })

      it("GET /api/openapi.json is an OpenAPI 3.1 document with servers [{url: /api}]", async () => {
        const res = await call({ method: "GET", path: paths.openapi })
        const document = record("openapi.json", expectJsonSuccess("GET openapi.json", res, 200, false))
        expect(str("openapi", document["openapi"]).startsWith("3.1"), `openapi is ${String(document["openapi"])}`).toBe(
          true
        )
        expect(document["servers"]).toEqual([{ url: "/api" }])
      })

      it("the OpenAPI document describes every operation, its statuses, bearer security and problem errors", async () => {
        const document = record(
          "openapi.json",
          parseJson("openapi.json", await call({ method: "GET", path: paths.openapi }))
        )
        const documentPaths = record("paths", document["paths"])
        const components = isRecord(document["components"]) ? document["components"] : {}
        const schemes = isRecord(components["securitySchemes"]) ? components["securitySchemes"] : {}
        const bearerSchemes = Object.entries(schemes)
          .filter(([, scheme]) => {
            const resolved = resolveRef(document, scheme)
            return (
              isRecord(resolved) && resolved["type"] === "http" && String(resolved["scheme"]).toLowerCase() === "bearer"
            )
          })
          .map(([schemeName]) => schemeName)
        expect(bearerSchemes.length, "a bearer security scheme").toBeGreaterThan(0)

        const operations: ReadonlyArray<{
          path: string
          method: string
          success: string
          errors: ReadonlyArray<string>
          credentialed: boolean
        }> = [
          {
            path: "/plans/v1/subscription-plans/public/",
            method: "post",
            success: "201",
            errors: ["400", "401", "413", "415"],
            credentialed: true
          },
          {
            path: "/users/v1/preferences/language/",
            method: "put",
            success: "200",
            errors: ["400", "401", "403", "413", "415"],
            credentialed: true
          },
          {
            path: "/users/v1/preferences/language/",
            method: "get",
            success: "200",
            errors: ["401", "403"],
            credentialed: true
          },
          {
            path: "/payments/v1/payment-methods/{id}/",
            method: "put",
            success: "200",
            errors: ["400", "401", "403", "404", "413", "415"],
            credentialed: true
          },
          {
            path: "/payments/v1/payment-methods/",
            method: "get",
            success: "200",
            errors: ["401", "403"],
            credentialed: true
          },
          { path: "/health", method: "get", success: "200", errors: ["503"], credentialed: false },
          { path: "/health/live", method: "get", success: "200", errors: [], credentialed: false },
          { path: "/health/ready", method: "get", success: "200", errors: ["503"], credentialed: false }
        ]
        for (const operation of operations) {
          const label = `${operation.method.toUpperCase()} ${operation.path}`
          const pathItem = record(`${label}: path item`, resolveRef(document, documentPaths[operation.path]))
          const op = record(`${label}: operation`, pathItem[operation.method])
          const responses = record(`${label}: responses`, op["responses"])
          expect(Object.keys(responses), `${label}: statuses`).toEqual(
            expect.arrayContaining([operation.success, ...operation.errors])
          )
          // Liveness never depends on the store, so it is never documented as 503.
          if (operation.errors.length === 0) expect(Object.keys(responses), `${label}: statuses`).not.toContain("503")
          for (const [status, response] of Object.entries(responses)) {
            if (!/^[45]/.test(status)) continue
            const content = record(
              `${label} ${status}: content`,
              record(`${label} ${status}`, resolveRef(document, response))["content"]
            )
            expect(Object.keys(content), `${label} ${status}: problem media type`).toContain("application/problem+json")
          }
          const security = op["security"] ?? document["security"]
          if (operation.credentialed) {
            if (!Array.isArray(security)) throw new Error(`${label}: no security requirement`)
            const referenced = security.flatMap((requirement: unknown) =>
              isRecord(requirement) ? Object.keys(requirement) : []
            )
            expect(
              referenced.some((scheme) => bearerSchemes.includes(scheme)),
              `${label}: bearer security`
            ).toBe(true)
          } else {
            expect(
              security === undefined || (Array.isArray(security) && security.length === 0),
              `${label}: no security`
            ).toBe(true)
          }
        }
      })

      it("GET /api/docs is an HTML page whose every asset is served locally (no CDN)", async () => {
        const res = await call({ method: "GET", path: paths.docs })
        expect(res.status, show("GET docs", res)).toBe(200)
        expectCommonHeaders("GET docs", res, UNVERSIONED_CACHE_CONTROL)
        expect(res.headers["content-type"] ?? "", "docs Content-Type").toMatch(/^text\/html(;|$)/)
        const html = text(res)
        expect(html.toLowerCase()).toContain("<html")
        if (server === undefined) throw new Error("the server did not start")
        const base = new URL(paths.docs, server.url)
        const references = assetReferences(html)
        const external = references.filter((reference) => new URL(reference, base).origin !== base.origin)
        expect(external, "assets loaded from another origin").toEqual([])
        for (const reference of references) {
          const target = new URL(reference, base)
          const asset = await call({ method: "GET", path: `${target.pathname}${target.search}` })
          const label = `docs asset ${reference}`
          expect(asset.status, show(label, asset)).toBe(200)
          expectCommonHeaders(label, asset, docsCacheControl(target))
          expect(asset.headers["content-type"] ?? "", `${label}: Content-Type`).not.toBe("")
          expect(asset.body.length, `${label}: not empty`).toBeGreaterThan(0)
        }
      })

      it("the docs page's versioned assets (?v=) are cacheable for a year; the page and openapi.json are not", async () => {
        const page = await call({ method: "GET", path: paths.docs })
        expectCommonHeaders("GET docs", page, UNVERSIONED_CACHE_CONTROL)
        if (server === undefined) throw new Error("the server did not start")
        const base = new URL(paths.docs, server.url)
        const versioned = assetReferences(text(page))
          .map((reference) => new URL(reference, base))
          .filter((target) => target.searchParams.has("v"))
        expect(versioned.length, "the page links versioned assets").toBeGreaterThan(0)
        for (const target of versioned) {
          const path = `${target.pathname}${target.search}`
          for (const method of ["GET", "HEAD"]) {
            const asset = await call({ method, path })
            expect(asset.status, show(`${method} ${path}`, asset)).toBe(200)
            expectCommonHeaders(`${method} ${path}`, asset, VERSIONED_CACHE_CONTROL)
          }
        }
        expectCommonHeaders("GET openapi.json", await call({ method: "GET", path: paths.openapi }))
      })

      it("HEAD answers like GET without a body on health, the probes, openapi.json and docs", async () => {
        for (const path of [paths.health, paths.live, paths.ready, paths.openapi, paths.docs]) {
          const get = await call({ method: "GET", path })
          const head = await call({ method: "HEAD", path })
          expect(get.status, show(`GET ${path}`, get)).toBe(200)
          expect(head.status, `HEAD ${path}`).toBe(200)
          expectCommonHeaders(`HEAD ${path}`, head, path === paths.docs ? UNVERSIONED_CACHE_CONTROL : "no-store")
          expect(head.headers["content-type"], `HEAD ${path}: Content-Type`).toBe(get.headers["content-type"])
          expect(head.body.length, `HEAD ${path}: no body`).toBe(0)
        }
      })
    })

    // -------------------------------------------------------------------------------------------------------------
    describe("authentication", () => {
      it('no header, an empty header, or another scheme: 401 unauthenticated with WWW-Authenticate: Bearer realm="api"', async () => {
        const cases: ReadonlyArray<[string, Record<string, string>]> = [
          ["no Authorization", {}],
          ["empty Authorization", { Authorization: "" }],
          ["Basic", { Authorization: "Basic dXNlcjpwYXNzd29yZA==" }],
          ["Digest", { Authorization: 'Digest username="u"' }],
          ["Bearer-like scheme", { Authorization: `Bearerx ${users.auth.token}` }]
        ]
        for (const [label, headers] of cases) {
          expectProblem(
            `GET preferences, ${label}`,
            await call({ method: "GET", path: paths.preferences, headers }),
            UNAUTHENTICATED
          )
          expectProblem(
            `PUT payment method, ${label}`,
            await call({ method: "PUT", path: paths.paymentMethod(fx.payIds[0] ?? ""), headers }),
            UNAUTHENTICATED
          )
        }
      })

      it("more than one Authorization header: 401 invalid_token, never a pick", async () => {
        // docs/SECURITY.md, "two Authorization headers": Node keeps only the first; the core sees them all.
        const valid = users.auth.token
        const pairs: ReadonlyArray<[string, string, string]> = [
          ["the same valid token twice", valid, valid],
          ["a valid token, then an unknown one", valid, `unknown-${run}`],
          ["an unknown token, then a valid one", `unknown-${run}`, valid]
        ]
        for (const [label, first, second] of pairs) {
          const head =
            `GET ${paths.preferences} HTTP/1.1\r\nHost: conformance\r\nAuthorization: Bearer ${first}\r\n` +
            `Authorization: Bearer ${second}\r\nConnection: close\r\n\r\n`
          const { wire } = await exchange(baseUrl(), head)
          expect(wire, label).toMatch(/^HTTP\/1\.1 401 /)
          expect(wire, label).toContain('"code":"invalid_token"')
        }
      })

      it("Bearer/Token with an empty, malformed or unknown token: 401 invalid_token", async () => {
        const cases: ReadonlyArray<[string, string]> = [
          ["Bearer without a token", "Bearer"],
          ["Token without a token", "Token"],
          ["a character outside the token grammar", "Bearer abc$def"],
          ["a space inside the token", `Bearer ${users.auth.token} extra`],
          ["'=' inside the token", "Bearer ab=cd"],
          ["513 characters", `Bearer ${"a".repeat(513)}`],
          ["an unknown token", `Bearer unknown-${run}`],
          ["an unknown token, Token scheme", `Token unknown-${run}`],
          ["a known token without its '=' padding", `Bearer ${users.eq.token.replace(/=+$/, "")}`],
          ["a known token with extra padding", `Bearer ${users.auth.token}=`]
        ]
        for (const [label, authorization] of cases) {
          const res = await call({ method: "GET", path: paths.preferences, headers: { Authorization: authorization } })
          expectProblem(`GET preferences, ${label}`, res, INVALID_TOKEN)
          const token = authorization.split(" ").slice(1).join(" ").trim()
          if (token.length > 3) expect(text(res), `${label}: the token is not reflected`).not.toContain(token)
        }
      })

      it("the scheme is case-insensitive, Token is a synonym, several spaces may separate scheme and token", async () => {
        const token = users.auth.token
        for (const authorization of [
          `bEaReR ${token}`,
          `BEARER ${token}`,
          `Token ${token}`,
          `tOkEn ${token}`,
          `Bearer    ${token}`
        ]) {
          const res = await call({ method: "GET", path: paths.preferences, headers: { Authorization: authorization } })
          expectPreferences(`GET preferences with "${authorization.slice(0, 12)}…"`, res, {
            language: "en",
            timezone: 0,
            mfa_enabled: false
          })
        }
      })

      it("a 512-character token followed by '=' padding is a valid credential", async () => {
        const res = await getPreferences(users.eq)
        expectPreferences("GET preferences with a padded 512-character token", res, {
          language: "en",
          timezone: 0,
          mfa_enabled: false
        })
      })

      it("a client credential on a user route: 403 insufficient_scope, before the body is looked at", async () => {
        const requests: ReadonlyArray<RawRequest> = [
          { method: "GET", path: paths.preferences, headers: bearer(client) },
          { method: "PUT", path: paths.preferences, headers: jsonHeaders(client), body: '{"language":"fr"}' },
          { method: "PUT", path: paths.preferences, headers: jsonHeaders(client, "text/plain"), body: "not json" },
          { method: "PUT", path: paths.preferences, headers: jsonHeaders(client), body: "{" },
          { method: "PUT", path: paths.paymentMethod(fx.payDefault), headers: bearer(client) },
          { method: "PUT", path: paths.paymentMethod(`unknown_${run}`), headers: bearer(client) },
          { method: "GET", path: paths.paymentMethods, headers: bearer(client) }
        ]
        for (const request of requests)
          expectProblem(`client ${request.method} ${request.path}`, await call(request), FORBIDDEN)
      })

      it("a client credential may create a public plan entry: 201", async () => {
        const res = await postPlanEntry(
          client,
          JSON.stringify({ email: `client.${run}@example.com`, password: "client-pass-1" })
        )
        expectJsonSuccess("POST plan entry as client", res, 201)
        expect(text(res)).toBe(JSON.stringify({ email: `client.${run}@example.com`, password: "********" }))
      })

      it("an unauthenticated request never learns about field rules", async () => {
        const body = '{"email":1,"password":2,"x":3}'
        expectProblem(
          "POST plan entry without credentials, invalid body",
          await call({
            method: "POST",
            path: paths.planEntries,
            headers: { "Content-Type": "application/json" },
            body
          }),
          UNAUTHENTICATED
        )
        expectProblem(
          "POST plan entry with an unknown token, invalid body",
          await call({
            method: "POST",
            path: paths.planEntries,
            headers: { "Content-Type": "application/json", Authorization: `Bearer unknown-${run}` },
            body
          }),
          INVALID_TOKEN
        )
      })
    })

    // -------------------------------------------------------------------------------------------------------------
    describe("order of checks", () => {
      it("an unknown route is 404 without credentials; a known path with a wrong method is 405 before 401", async () => {
        expectProblem("GET /api/nope", await call({ method: "GET", path: "/api/nope" }), NOT_FOUND)
        expectProblem(
          "DELETE preferences without credentials",
          await call({ method: "DELETE", path: paths.preferences }),
          notAllowed("GET, HEAD, OPTIONS, PUT")
        )
        expectProblem(
          "DELETE preferences with a bad token",
          await call({ method: "DELETE", path: paths.preferences, headers: { Authorization: "Bearer $" } }),
          notAllowed("GET, HEAD, OPTIONS, PUT")
        )
      })

      it("401 comes before 415, 413 and 400, and the server does not wait for a large declared body", async () => {
        expectProblem(
          "PUT preferences without credentials, text/plain",
          await call({
            method: "PUT",
            path: paths.preferences,
            headers: { "Content-Type": "text/plain" },
            body: "hello"
          }),
          UNAUTHENTICATED
        )
        expectProblem(
          "PUT preferences without credentials, invalid JSON",
          await call({
            method: "PUT",
            path: paths.preferences,
            headers: { "Content-Type": "application/json" },
            body: "{"
          }),
          UNAUTHENTICATED
        )
        expectProblem(
          "PUT preferences without credentials, 10 MB declared, 12 bytes sent",
          await call({
            method: "PUT",
            path: paths.preferences,
            headers: { "Content-Type": "application/json" },
            body: '{"language":',
            declaredLength: 10 * 1024 * 1024,
            timeoutMs: 3000
          }),
          UNAUTHENTICATED
        )
        expectProblem(
          "POST plan entry with an unknown token, 10 MB declared, 12 bytes sent",
          await call({
            method: "POST",
            path: paths.planEntries,
            headers: { "Content-Type": "application/json", Authorization: `Bearer unknown-${run}` },
            body: '{"email":"a"',
            declaredLength: 10 * 1024 * 1024,
            timeoutMs: 3000
          }),
          INVALID_TOKEN
        )
      })

      it("415 comes before 413, 413 before invalid_json, invalid_json before field validation", async () => {
        const user = users.pjson
        expectProblem(
          "text/plain body over the limit",
          await call({
            method: "PUT",
            path: paths.preferences,
            headers: jsonHeaders(user, "text/plain"),
            body: "x".repeat(20_000)
          }),
          UNSUPPORTED
        )
        expectProblem("invalid JSON over the limit", await putPreferences(user, `{${"x".repeat(16_384)}`), TOO_LARGE)
        expectProblem("invalid JSON with an invalid field", await putPreferences(user, '{"timezone":61,'), INVALID_JSON)
        expectProblem("a non-object body", await putPreferences(user, '[{"timezone":61}]'), INVALID_BODY)
      })

      it("field validation comes before the use case: a bad body on an unknown payment method is 400", async () => {
        expectProblem(
          "PUT unknown payment method with is_default false",
          await call({
            method: "PUT",
            path: paths.paymentMethod(`unknown_${run}`),
            headers: jsonHeaders(users.pay),
            body: '{"is_default":false}'
          }),
          validation([["/is_default", "not_allowed"]])
        )
      })
    })

    // -------------------------------------------------------------------------------------------------------------
    describe("POST /api/plans/v1/subscription-plans/public/", () => {
      it("201 with the email trimmed and its domain lower-cased, the password masked", async () => {
        const res = await postPlanEntry(
          users.auth,
          JSON.stringify({ email: ` \t Alice.${run}@Example.COM \n`, password: "correct horse" })
        )
        expectJsonSuccess("POST plan entry", res, 201)
        expect(text(res)).toBe(JSON.stringify({ email: `Alice.${run}@example.com`, password: "********" }))
      })

      it("a duplicate email (any case) gets the same 201 a new one would (no enumeration)", async () => {
        const first = await postPlanEntry(
          users.auth,
          JSON.stringify({ email: `dup.${run}@example.com`, password: "first-password" })
        )
        expectJsonSuccess("first entry", first, 201)
        expect(text(first)).toBe(JSON.stringify({ email: `dup.${run}@example.com`, password: "********" }))
        const again = await postPlanEntry(
          users.auth,
          JSON.stringify({ email: `dup.${run}@example.com`, password: "second-password" })
        )
        expectJsonSuccess("same email again", again, 201)
        expect(text(again)).toBe(text(first))
        const otherCase = await postPlanEntry(
          users.auth,
          JSON.stringify({ email: `DUP.${run}@EXAMPLE.com`, password: "third-password" })
        )
        expectJsonSuccess("same email, other case", otherCase, 201)
        expect(text(otherCase)).toBe(JSON.stringify({ email: `DUP.${run}@example.com`, password: "********" }))
      })

      it("accepts the boundaries: a 254-character address, every dot-atom character, 8 and 128 code-point passwords", async () => {
        const local = `l${run}`.padEnd(64, "x")
        const domain = `${"A".repeat(63)}.${"b".repeat(63)}.${"c".repeat(57)}.com`
        const longest = `${local}@${domain}`
        expect(longest.length).toBe(254)
        const accepted: ReadonlyArray<[string, string, string]> = [
          ["254 characters, padded with spaces", `  ${longest}  `, "password"],
          ["dot-atom specials", `a!#$%&'*+/=?^_\`{|}~-.${run}@sub-1.Example.org`, "12345678"],
          ["8 emoji (16 UTF-16 units)", `emoji8.${run}@example.com`, "😀".repeat(8)],
          ["128 emoji (256 UTF-16 units)", `emoji128.${run}@example.com`, "😀".repeat(128)]
        ]
        for (const [label, email, password] of accepted) {
          const res = await postPlanEntry(users.auth, JSON.stringify({ email, password }))
          expectJsonSuccess(label, res, 201)
          const [localPart, domainPart] = email.trim().split(/@(?=[^@]*$)/)
          expect(text(res), label).toBe(
            JSON.stringify({ email: `${localPart}@${(domainPart ?? "").toLowerCase()}`, password: "********" })
          )
        }
      })

      it("field errors: exact codes, one per field, sorted by pointer", async () => {
        const local = `l${run}`.padEnd(64, "x")
        const cases: ReadonlyArray<[string, unknown, FieldErrors]> = [
          [
            "empty object",
            {},
            [
              ["/email", "required"],
              ["/password", "required"]
            ]
          ],
          ["password missing", { email: `x.${run}@example.com` }, [["/password", "required"]]],
          [
            "wrong types",
            { email: 1, password: null },
            [
              ["/email", "invalid_type"],
              ["/password", "invalid_type"]
            ]
          ],
          [
            "empty strings",
            { email: "", password: "" },
            [
              ["/email", "too_short"],
              ["/password", "too_short"]
            ]
          ],
          [
            "7-character password",
            { email: `x.${run}@example.com`, password: "1234567" },
            [["/password", "too_short"]]
          ],
          [
            "7 emoji password",
            { email: `x.${run}@example.com`, password: "😀".repeat(7) },
            [["/password", "too_short"]]
          ],
          [
            "129-character password",
            { email: `x.${run}@example.com`, password: "p".repeat(129) },
            [["/password", "too_long"]]
          ],
          [
            "255-character email",
            { email: `${local}@${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(58)}.com`, password: "password" },
            [["/email", "too_long"]]
          ],
          [
            "65-character local part",
            { email: `${local}y@example.com`, password: "password" },
            [["/email", "invalid_format"]]
          ],
          ["no @", { email: "not-an-email", password: "password" }, [["/email", "invalid_format"]]],
          ["two @", { email: "a@b@example.com", password: "password" }, [["/email", "invalid_format"]]],
          ["doubled dot", { email: "a..b@example.com", password: "password" }, [["/email", "invalid_format"]]],
          ["leading dot", { email: ".a@example.com", password: "password" }, [["/email", "invalid_format"]]],
          ["quoted local part", { email: '"a b"@example.com', password: "password" }, [["/email", "invalid_format"]]],
          ["one-label domain", { email: "a@localhost", password: "password" }, [["/email", "invalid_format"]]],
          ["numeric last label", { email: "a@example.123", password: "password" }, [["/email", "invalid_format"]]],
          ["label starting with -", { email: "a@-example.com", password: "password" }, [["/email", "invalid_format"]]],
          ["trailing dot", { email: "a@example.com.", password: "password" }, [["/email", "invalid_format"]]],
          [
            "64-character label",
            { email: `a@${"d".repeat(64)}.com`, password: "password" },
            [["/email", "invalid_format"]]
          ],
          [
            "unknown field",
            { email: `x.${run}@example.com`, password: "password", name: "x" },
            [["/name", "unknown_field"]]
          ],
          [
            "every field wrong",
            { password: 12345678, email: "bad", a: 1 },
            [
              ["/a", "unknown_field"],
              ["/email", "invalid_format"],
              ["/password", "invalid_type"]
            ]
          ]
        ]
        for (const [label, body, errors] of cases) {
          expectProblem(
            `POST plan entry, ${label}`,
            await postPlanEntry(users.auth, JSON.stringify(body)),
            validation(errors)
          )
        }
        const secret = `Secret-${run}-`.padEnd(129, "s")
        const res = await postPlanEntry(
          users.auth,
          JSON.stringify({ email: `secret.${run}@example.com`, password: secret })
        )
        expectProblem("POST plan entry, long password", res, validation([["/password", "too_long"]]))
        expect(text(res), "the password is not reflected").not.toContain(`Secret-${run}`)
      })

      it("an email around a body's worth of inner whitespace is answered like any long email (linear trim)", async () => {
        // docs/SECURITY.md, quadratic email trim: this body once blocked the event loop for 0.2-0.4 s per request.
        const hostile = JSON.stringify({ email: "a" + " ".repeat(16_300) + "a", password: "password" })
        const answers = await Promise.all([1, 2, 3, 4].map(() => postPlanEntry(users.auth, hostile)))
        for (const res of answers)
          expectProblem("POST plan entry, inner whitespace", res, validation([["/email", "too_long"]]))
        expect((await call({ method: "GET", path: paths.health })).status).toBe(200)
      })

      it("bodies that are not JSON objects", async () => {
        expectProblem("empty body", await postPlanEntry(users.auth, ""), INVALID_JSON)
        expectProblem(
          "no body",
          await call({ method: "POST", path: paths.planEntries, headers: bearer(users.auth) }),
          INVALID_JSON
        )
        expectProblem("array", await postPlanEntry(users.auth, "[]"), INVALID_BODY)
        expectProblem("string", await postPlanEntry(users.auth, '"x"'), INVALID_BODY)
        expectProblem(
          "over the limit",
          await postPlanEntry(users.auth, padded('{"email":"a@example.com","password":"password"', "}", 16_385)),
          TOO_LARGE
        )
      })
    })

    // -------------------------------------------------------------------------------------------------------------
    describe("GET and PUT /api/users/v1/preferences/language/", () => {
      it("GET creates the defaults on first use (en, 0, false) with created_at == updated_at; GET again is identical", async () => {
        const first = await getPreferences(users.pget)
        const created = expectPreferences("first GET", first, { language: "en", timezone: 0, mfa_enabled: false })
        expect(created.updated_at).toBe(created.created_at)
        const second = await getPreferences(users.pget)
        expect(text(second)).toBe(text(first))
      })

      it("the first PUT creates the record; {} on a new user returns the defaults", async () => {
        const empty = expectPreferences("first PUT {}", await putPreferences(users.pempty, "{}"), {
          language: "en",
          timezone: 0,
          mfa_enabled: false
        })
        expect(empty.updated_at).toBe(empty.created_at)
        const created = expectPreferences(
          "first PUT with values",
          await putPreferences(users.pput, '{"language":"EN-us","timezone":60,"mfa_enabled":true}'),
          { language: "en-US", timezone: 60, mfa_enabled: true }
        )
        expect(created.updated_at, "updated_at equals created_at on creation").toBe(created.created_at)
        const read = await getPreferences(users.pput)
        expectPreferences("GET after the first PUT", read, { language: "en-US", timezone: 60, mfa_enabled: true })
        expect(text(read)).toBe(JSON.stringify(created))
      })

      it("merge semantics; updated_at moves only on a real change; id and created_at never change", async () => {
        const user = users.pmerge
        const start = expectPreferences("PUT language", await putPreferences(user, '{"language":"fr"}'), {
          language: "fr",
          timezone: 0,
          mfa_enabled: false
        })
        await pause(5)
        const tz = expectPreferences("PUT timezone", await putPreferences(user, '{"timezone":120}'), {
          language: "fr",
          timezone: 120,
          mfa_enabled: false
        })
        expect(tz.id).toBe(start.id)
        expect(tz.created_at).toBe(start.created_at)
        expect(tz.updated_at > start.updated_at, "updated_at moved").toBe(true)
        await pause(5)
        const mfaRes = await putPreferences(user, '{"mfa_enabled":true}')
        const mfa = expectPreferences("PUT mfa_enabled", mfaRes, { language: "fr", timezone: 120, mfa_enabled: true })
        expect(mfa.updated_at > tz.updated_at, "updated_at moved").toBe(true)
        await pause(5)
        const unchanged: ReadonlyArray<[string, string]> = [
          ["{}", "{}"],
          ["the same values", '{"language":"fr","timezone":120,"mfa_enabled":true}'],
          ["the same language in another case", '{"language":"FR"}'],
          ["the same timezone as 120.0", '{"timezone":120.0}']
        ]
        for (const [label, body] of unchanged) {
          const res = await putPreferences(user, body)
          expectPreferences(`PUT ${label}`, res, { language: "fr", timezone: 120, mfa_enabled: true })
          expect(text(res), `PUT ${label} changes nothing`).toBe(text(mfaRes))
        }
        expect(text(await getPreferences(user)), "GET after no-ops").toBe(text(mfaRes))
        const back = expectPreferences(
          "PUT two fields",
          await putPreferences(user, '{"timezone":0,"mfa_enabled":false}'),
          { language: "fr", timezone: 0, mfa_enabled: false }
        )
        expect(back.id).toBe(start.id)
        expect(back.created_at).toBe(start.created_at)
        expect(back.updated_at > mfa.updated_at, "updated_at moved").toBe(true)
      })

      it("read-only id, created_at, updated_at are ignored whatever their type or value", async () => {
        const user = users.pro
        const initial = await getPreferences(user)
        const record0 = expectPreferences("GET", initial, { language: "en", timezone: 0, mfa_enabled: false })
        for (const body of [
          '{"id":"x"}',
          '{"id":999999,"created_at":"2000-01-01T00:00:00.000Z","updated_at":"2000-01-01T00:00:00.000Z"}',
          '{"id":null,"created_at":5,"updated_at":false}',
          '{"id":{"nested":[1,2]},"created_at":[],"updated_at":{}}'
        ]) {
          const res = await putPreferences(user, body)
          expectPreferences(`PUT ${body}`, res, { language: "en", timezone: 0, mfa_enabled: false })
          expect(text(res), `PUT ${body}`).toBe(text(initial))
        }
        await pause(5)
        const changed = expectPreferences(
          "PUT language with a read-only id",
          await putPreferences(user, '{"id":1,"language":"de"}'),
          {
            language: "de",
            timezone: 0,
            mfa_enabled: false
          }
        )
        expect(changed.id).toBe(record0.id)
        expect(changed.created_at).toBe(record0.created_at)
      })

      it("language: canonicalised, at most 35 characters, Intl-accepted tags only", async () => {
        const user = users.plang
        const tag35 = "en-x-abcdefgh-abcdefgh-abcdefgh-abc"
        const accepted: ReadonlyArray<[string, string]> = [
          ["EN-us", "en-US"],
          ["iw", "he"],
          ["zh-hant-tw", "zh-Hant-TW"],
          [tag35, tag35]
        ]
        for (const [sent, stored] of accepted) {
          expectPreferences(`language ${sent}`, await putPreferences(user, JSON.stringify({ language: sent })), {
            language: stored,
            timezone: 0,
            mfa_enabled: false
          })
        }
        const rejected: ReadonlyArray<[string, string, string]> = [
          ["en_US", '"en_US"', "invalid_format"],
          ["empty", '""', "too_short"],
          ["36 characters", JSON.stringify(`${tag35}d`), "too_long"],
          ["36 characters that are no tag", JSON.stringify("x".repeat(36)), "too_long"],
          ["a number", "5", "invalid_type"],
          ["null", "null", "invalid_type"],
          ["an array", '["en"]', "invalid_type"],
          ["an object", '{"tag":"en"}', "invalid_type"],
          ["the string __proto__", '"__proto__"', "invalid_format"]
        ]
        for (const [label, value, code] of rejected) {
          expectProblem(
            `language ${label}`,
            await putPreferences(user, `{"language":${value}}`),
            validation([["/language", code]])
          )
        }
        // A rejected PUT changes nothing.
        expectPreferences("GET after rejected PUTs", await getPreferences(user), {
          language: tag35,
          timezone: 0,
          mfa_enabled: false
        })
      })

      it("timezone: integer minutes, -720..840, multiple of 15, read as a JSON number", async () => {
        const user = users.ptz
        const accepted: ReadonlyArray<[string, number]> = [
          ["60.0", 60],
          ["6e1", 60],
          ["-720", -720],
          ["840", 840],
          ["345", 345],
          ["0", 0]
        ]
        for (const [sent, stored] of accepted) {
          const res = await putPreferences(user, `{"timezone":${sent}}`)
          expectPreferences(`timezone ${sent}`, res, { language: "en", timezone: stored, mfa_enabled: false })
        }
        const rejected: ReadonlyArray<[string, string]> = [
          ["61", "invalid_format"],
          ["-10", "invalid_format"],
          ["855", "out_of_range"],
          ["-735", "out_of_range"],
          ["1000", "out_of_range"],
          ["30.5", "invalid_type"],
          ["1e400", "invalid_type"],
          ['"60"', "invalid_type"],
          ["null", "invalid_type"],
          ["true", "invalid_type"],
          ["[60]", "invalid_type"]
        ]
        for (const [value, code] of rejected) {
          expectProblem(
            `timezone ${value}`,
            await putPreferences(user, `{"timezone":${value}}`),
            validation([["/timezone", code]])
          )
        }
        expectPreferences("GET after rejected PUTs", await getPreferences(user), {
          language: "en",
          timezone: 0,
          mfa_enabled: false
        })
      })

      it("mfa_enabled: JSON booleans only", async () => {
        const user = users.pmfa
        expectPreferences("mfa true", await putPreferences(user, '{"mfa_enabled":true}'), {
          language: "en",
          timezone: 0,
          mfa_enabled: true
        })
        expectPreferences("mfa false", await putPreferences(user, '{"mfa_enabled":false}'), {
          language: "en",
          timezone: 0,
          mfa_enabled: false
        })
        for (const value of ['"true"', "1", "0", "null", '"false"', "[]"]) {
          expectProblem(
            `mfa_enabled ${value}`,
            await putPreferences(user, `{"mfa_enabled":${value}}`),
            validation([["/mfa_enabled", "invalid_type"]])
          )
        }
      })

      it("several bad fields: one error per field, sorted by pointer, nothing applied", async () => {
        const user = users.pmfa
        expectProblem(
          "four bad fields",
          await putPreferences(user, '{"language":"en_US","timezone":61,"mfa_enabled":"true","x":1}'),
          validation([
            ["/language", "invalid_format"],
            ["/mfa_enabled", "invalid_type"],
            ["/timezone", "invalid_format"],
            ["/x", "unknown_field"]
          ])
        )
        expectProblem(
          "one bad field among good ones",
          await putPreferences(user, '{"zeta":true,"language":"de","alpha":1}'),
          validation([
            ["/alpha", "unknown_field"],
            ["/zeta", "unknown_field"]
          ])
        )
        expectPreferences("GET: nothing applied", await getPreferences(user), {
          language: "en",
          timezone: 0,
          mfa_enabled: false
        })
      })
    })

    // -------------------------------------------------------------------------------------------------------------
    describe("request bodies", () => {
      it("invalid JSON: syntax, BOM, invalid UTF-8, duplicate keys, prototype keys, nesting over 32 levels", async () => {
        const cases: ReadonlyArray<[string, string | Uint8Array]> = [
          ["truncated", '{"language":"fr"'],
          ["single quotes", "{'language':'fr'}"],
          ["trailing comma", '{"language":"fr",}'],
          ["leading zero", '{"timezone":01}'],
          ["NaN", '{"timezone":NaN}'],
          ["raw newline in a string", '{"language":"f\nr"}'],
          ["bad escape", '{"language":"\\x41"}'],
          ["trailing garbage", '{"language":"fr"} x'],
          ["two documents", '{"language":"fr"}{}'],
          ["whitespace only", "   "],
          ["byte-order mark", bytes([0xef, 0xbb, 0xbf], '{"language":"fr"}')],
          ["invalid UTF-8 byte", bytes('{"language":"', [0xff], '"}')],
          ["overlong UTF-8", bytes('{"language":"', [0xc0, 0xaf], '"}')],
          ["UTF-8 encoded surrogate", bytes('{"language":"', [0xed, 0xa0, 0x80], '"}')],
          ["truncated UTF-8 sequence", bytes('{"language":"', [0xe2, 0x82], '"}')],
          ["invalid UTF-8 in a key", bytes('{"', [0xfe], '":1}')],
          ["duplicate key", '{"timezone":0,"timezone":60}'],
          ["duplicate key, same value", '{"language":"fr","language":"fr"}'],
          ["duplicate key, nested", '{"id":{"a":1,"a":2}}'],
          ["duplicate key, nested in an array", '{"id":[{"a":1},{"b":1,"b":1}]}'],
          ["duplicate key through an escape", '{"timezone":0,"time\\u007aone":60}'],
          ["__proto__ key", '{"__proto__":{}}'],
          ["__proto__ key, escaped", '{"__proto\\u005f_":{"language":"fr"}}'],
          ["constructor key", '{"constructor":{"prototype":{}}}'],
          ["constructor key, nested", '{"id":{"constructor":1}}'],
          ["prototype key in an array", '{"id":[{"prototype":1}]}'],
          ["33 levels", nested("language", 33)]
        ]
        for (const [label, body] of cases)
          expectProblem(`PUT preferences, ${label}`, await putPreferences(users.pjson, body), INVALID_JSON)
      })

      it("32 levels of nesting is valid JSON, then fails field validation", async () => {
        expectProblem(
          "32 levels",
          await putPreferences(users.pjson, nested("language", 32)),
          validation([["/language", "invalid_type"]])
        )
        expectProblem(
          "32 levels in timezone",
          await putPreferences(users.pjson, nested("timezone", 32)),
          validation([["/timezone", "invalid_type"]])
        )
        expectPreferences("32 levels in a read-only field", await putPreferences(users.pjson, nested("id", 32)), {
          language: "en",
          timezone: 0,
          mfa_enabled: false
        })
      })

      it("a body that is valid JSON but not an object: 400 invalid_body", async () => {
        for (const body of ["[]", "[{}]", '"x"', "1", "-0.5", "null", "true", " [ ] "]) {
          expectProblem(`PUT preferences ${body}`, await putPreferences(users.pjson, body), INVALID_BODY)
          expectProblem(
            `PUT payment method ${body}`,
            await call({
              method: "PUT",
              path: paths.paymentMethod(`unknown_${run}`),
              headers: jsonHeaders(users.pay),
              body
            }),
            INVALID_BODY
          )
        }
      })

      it("no body, or a zero-byte body whatever its Content-Type, where a body is required: 400 invalid_json", async () => {
        const cases: ReadonlyArray<[string, RawRequest]> = [
          ["no body", { method: "PUT", path: paths.preferences, headers: jsonHeaders(users.pjson) }],
          [
            "Content-Length: 0",
            { method: "PUT", path: paths.preferences, headers: jsonHeaders(users.pjson), body: "" }
          ],
          [
            "Content-Length: 0 and no Content-Type",
            { method: "PUT", path: paths.preferences, headers: bearer(users.pjson), body: "" }
          ],
          [
            "Content-Length: 0 and text/plain",
            { method: "PUT", path: paths.preferences, headers: jsonHeaders(users.pjson, "text/plain"), body: "" }
          ],
          ["no body and no Content-Type", { method: "PUT", path: paths.preferences, headers: bearer(users.pjson) }]
        ]
        for (const [label, request] of cases)
          expectProblem(`PUT preferences, ${label}`, await call(request), INVALID_JSON)
      })

      it("media types: application/json with an utf-8 charset in any spelling is accepted", async () => {
        const user = users.pmedia
        for (const contentType of [
          "application/json",
          "application/json; charset=utf-8",
          'Application/JSON; charset="UTF8"',
          "application/json;charset=UTF-8",
          "APPLICATION/JSON; CHARSET=Utf-8",
          "application/json; foo=bar"
        ]) {
          const res = await call({
            method: "PUT",
            path: paths.preferences,
            headers: jsonHeaders(user, contentType),
            body: '{"timezone":0}'
          })
          expectPreferences(`Content-Type ${contentType}`, res, { language: "en", timezone: 0, mfa_enabled: false })
        }
      })

      it("media types: anything else with a body is 415", async () => {
        const user = users.pmedia
        const body = '{"timezone":0}'
        expectProblem(
          "no Content-Type",
          await call({ method: "PUT", path: paths.preferences, headers: bearer(user), body }),
          UNSUPPORTED
        )
        expectProblem(
          "chunked body without Content-Type",
          await call({ method: "PUT", path: paths.preferences, headers: bearer(user), chunks: ['{"time', 'zone":0}'] }),
          UNSUPPORTED
        )
        for (const contentType of [
          "text/plain",
          "text/json",
          "application/json; charset=latin1",
          "application/json; charset=utf-16",
          "application/merge-patch+json",
          "application/problem+json",
          "application/jsonx",
          "application/x-www-form-urlencoded",
          "multipart/form-data; boundary=x",
          ""
        ]) {
          expectProblem(
            `Content-Type ${contentType}`,
            await call({ method: "PUT", path: paths.preferences, headers: jsonHeaders(user, contentType), body }),
            UNSUPPORTED
          )
        }
        expectProblem(
          "POST plan entry text/plain",
          await call({
            method: "POST",
            path: paths.planEntries,
            headers: jsonHeaders(users.auth, "text/plain"),
            body: '{"email":"a@example.com","password":"password"}'
          }),
          UNSUPPORTED
        )
        expectProblem(
          "PUT payment method text/plain with a body",
          await call({
            method: "PUT",
            path: paths.paymentMethod(`unknown_${run}`),
            headers: jsonHeaders(users.pay, "text/plain"),
            body: "{}"
          }),
          UNSUPPORTED
        )
      })

      it("size: 16384 bytes pass, 16385 are 413 Content Too Large, counted in bytes", async () => {
        const user = users.psize
        const exact = padded('{"language":"fr"', "}", 16_384)
        expect(Buffer.byteLength(exact)).toBe(16_384)
        expectPreferences("16384 bytes", await putPreferences(user, exact), {
          language: "fr",
          timezone: 0,
          mfa_enabled: false
        })
        expectProblem("16385 bytes", await putPreferences(user, padded('{"language":"de"', "}", 16_385)), TOO_LARGE)
        // Three-byte characters: under 16384 UTF-16 units, over 16384 bytes.
        const multibyte = `{"language":"de","x":"${"€".repeat(5_455)}"}`
        expect(multibyte.length).toBeLessThan(16_384)
        expect(Buffer.byteLength(multibyte)).toBeGreaterThan(16_384)
        expectProblem("over 16384 bytes in fewer characters", await putPreferences(user, multibyte), TOO_LARGE)
        expectPreferences("GET after 413s", await getPreferences(user), {
          language: "fr",
          timezone: 0,
          mfa_enabled: false
        })
        expectProblem(
          "set-default with 16385 bytes",
          await call({
            method: "PUT",
            path: paths.paymentMethod(fx.otherId),
            headers: jsonHeaders(users.other),
            body: padded('{"is_default":true', "}", 16_385)
          }),
          TOO_LARGE
        )
      })

      it("size: a large declared Content-Length is refused without waiting for the body", async () => {
        const res = await call({
          method: "PUT",
          path: paths.preferences,
          headers: jsonHeaders(users.psize),
          body: '{"language":"de"',
          declaredLength: 10 * 1024 * 1024,
          timeoutMs: 3000
        })
        expectProblem("10 MB declared, 16 bytes sent", res, TOO_LARGE)
      })

      it("a transfer coding other than chunked is 501 not_implemented, after the credentials", async () => {
        // docs/SECURITY.md, "Transfer-Encoding: gzip, chunked": the body is never read as if it were plain JSON.
        const request = (authorization: string) =>
          `PUT ${paths.preferences} HTTP/1.1\r\nHost: conformance\r\n${authorization}Content-Type: application/json\r\n` +
          `Transfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n2\r\n{}\r\n0\r\n\r\n`
        const refused = await exchange(baseUrl(), request(`Authorization: Bearer ${users.psize.token}\r\n`))
        expect(refused.wire).toMatch(/^HTTP\/1\.1 501 /)
        expect(refused.wire).toContain('"code":"not_implemented"')
        expect(refused.wire).toMatch(/content-type: application\/problem\+json; charset=utf-8/i)
        const anonymous = await exchange(baseUrl(), request(""))
        expect(anonymous.wire).toMatch(/^HTTP\/1\.1 401 /)
      })

      it("size: a chunked body counts as it arrives", async () => {
        const user = users.psize
        expectPreferences(
          "chunked, under the limit",
          await call({
            method: "PUT",
            path: paths.preferences,
            headers: jsonHeaders(user),
            chunks: ['{"lang', 'uage"', ':"fr"}']
          }),
          { language: "fr", timezone: 0, mfa_enabled: false }
        )
        const chunks = ['{"language":"de"', " ".repeat(8_000), " ".repeat(8_000), `${" ".repeat(368)}}`]
        expect(Buffer.byteLength(chunks.join(""))).toBe(16_385)
        expectProblem(
          "chunked, 16385 bytes in four chunks",
          await call({ method: "PUT", path: paths.preferences, headers: jsonHeaders(user), chunks }),
          TOO_LARGE
        )
      })

      it("bodies and Content-Length on GET and OPTIONS are ignored", async () => {
        const user = users.pget
        const plain = await getPreferences(user)
        const withBody = await call({
          method: "GET",
          path: paths.preferences,
          headers: jsonHeaders(user, "text/plain"),
          body: "not json at all"
        })
        expectPreferences("GET with a text/plain body", withBody, { language: "en", timezone: 0, mfa_enabled: false })
        expect(text(withBody)).toBe(text(plain))
        const declared = await call({
          method: "GET",
          path: paths.preferences,
          headers: jsonHeaders(user),
          body: "{",
          declaredLength: 10 * 1024 * 1024,
          timeoutMs: 3000
        })
        expectPreferences("GET with 10 MB declared", declared, { language: "en", timezone: 0, mfa_enabled: false })
        const head = await call({
          method: "HEAD",
          path: paths.preferences,
          headers: jsonHeaders(user, "text/plain"),
          body: "not json"
        })
        expect(head.status, "HEAD with a text/plain body").toBe(200)
        expect(head.body.length).toBe(0)
        const options = await call({
          method: "OPTIONS",
          path: paths.preferences,
          headers: { "Content-Type": "text/plain" },
          body: "x".repeat(20_000)
        })
        expect(options.status, show("OPTIONS with a large text/plain body", options)).toBe(204)
        expect(options.headers["allow"]).toBe("GET, HEAD, OPTIONS, PUT")
      })
    })

    // -------------------------------------------------------------------------------------------------------------
    describe("routes and methods", () => {
      it("every other path, inside or outside /api, is a 404 problem whatever the credentials", async () => {
        const unknownPaths = [
          "/",
          "/health",
          "/api",
          "/api/",
          "/api/nope",
          "/apix/health",
          "/api/health/",
          "/api/health/live/",
          "/api/health/ready/",
          "/api/health/started",
          "/api/openapi.json/",
          "/API/health",
          "/api/users/v1/preferences/language/extra/",
          "/api/users/v1/preferences/",
          "/api/payments/v1/payment-methods/a/b/",
          "/api/plans/v1/subscription-plans/",
          "/api/plans/v1/subscription-plans/public/x/",
          "/api/v1/payment-methods/pm_1/",
          "/api/users/v2/preferences/language/"
        ]
        for (const path of unknownPaths) {
          expectProblem(`GET ${path}`, await call({ method: "GET", path }), NOT_FOUND)
          expectProblem(
            `GET ${path} as a user`,
            await call({ method: "GET", path, headers: bearer(users.auth) }),
            NOT_FOUND
          )
          expectProblem(
            `DELETE ${path} with a bad token`,
            await call({ method: "DELETE", path, headers: { Authorization: "Bearer $" } }),
            NOT_FOUND
          )
        }
        // Only GET: the contract lets docs serve files under /api/docs/, so another method there may be 405.
        const missingAsset = `/api/docs/missing-${run}.js`
        expectProblem(`GET ${missingAsset}`, await call({ method: "GET", path: missingAsset }), NOT_FOUND)
        expectProblem(
          "POST /api/nope with a body",
          await call({ method: "POST", path: "/api/nope", headers: { "Content-Type": "text/plain" }, body: "x" }),
          NOT_FOUND
        )
      })

      it("a wrong method on a known path is 405 with Allow (sorted, HEAD and OPTIONS included), whatever the credentials", async () => {
        const cases: ReadonlyArray<[string, ReadonlyArray<string>, string]> = [
          [paths.planEntries, ["GET", "PUT", "PATCH", "DELETE"], "OPTIONS, POST"],
          [withoutSlash(paths.planEntries), ["GET", "DELETE"], "OPTIONS, POST"],
          [paths.preferences, ["POST", "PATCH", "DELETE"], "GET, HEAD, OPTIONS, PUT"],
          [withoutSlash(paths.preferences), ["POST", "DELETE"], "GET, HEAD, OPTIONS, PUT"],
          [paths.paymentMethod(fx.payDefault), ["GET", "POST", "PATCH", "DELETE"], "OPTIONS, PUT"],
          [withoutSlash(paths.paymentMethod(fx.payDefault)), ["GET", "DELETE"], "OPTIONS, PUT"],
          [paths.paymentMethods, ["PUT", "POST", "DELETE"], "GET, HEAD, OPTIONS"],
          [withoutSlash(paths.paymentMethods), ["PUT"], "GET, HEAD, OPTIONS"],
          [paths.health, ["POST", "PUT", "DELETE"], "GET, HEAD, OPTIONS"],
          [paths.live, ["POST", "PUT", "DELETE"], "GET, HEAD, OPTIONS"],
          [paths.ready, ["POST", "PUT", "DELETE"], "GET, HEAD, OPTIONS"],
          [paths.openapi, ["POST", "PUT"], "GET, HEAD, OPTIONS"],
          [paths.docs, ["POST"], "GET, HEAD, OPTIONS"]
        ]
        for (const [path, methods, allow] of cases) {
          for (const method of methods) {
            expectProblem(`${method} ${path}`, await call({ method, path }), notAllowed(allow))
            expectProblem(
              `${method} ${path} as a client`,
              await call({ method, path, headers: bearer(client) }),
              notAllowed(allow)
            )
          }
        }
        expectProblem(
          "HEAD on a PUT-only path",
          await call({ method: "HEAD", path: paths.paymentMethod(fx.payDefault) }),
          notAllowed("OPTIONS, PUT", true)
        )
        expectProblem(
          "GET on a payment method id outside the charset (the route matches any segment)",
          await call({ method: "GET", path: paths.paymentMethod("pm.1") }),
          notAllowed("OPTIONS, PUT")
        )
      })

      it("OPTIONS on a known path is 204 with Allow and no body, whatever the credentials", async () => {
        const cases: ReadonlyArray<[string, string]> = [
          [paths.planEntries, "OPTIONS, POST"],
          [withoutSlash(paths.planEntries), "OPTIONS, POST"],
          [paths.preferences, "GET, HEAD, OPTIONS, PUT"],
          [withoutSlash(paths.preferences), "GET, HEAD, OPTIONS, PUT"],
          [paths.paymentMethod(fx.payDefault), "OPTIONS, PUT"],
          [withoutSlash(paths.paymentMethod(fx.payDefault)), "OPTIONS, PUT"],
          [paths.paymentMethods, "GET, HEAD, OPTIONS"],
          [withoutSlash(paths.paymentMethods), "GET, HEAD, OPTIONS"],
          [paths.health, "GET, HEAD, OPTIONS"],
          [paths.live, "GET, HEAD, OPTIONS"],
          [paths.ready, "GET, HEAD, OPTIONS"],
          [paths.openapi, "GET, HEAD, OPTIONS"],
          [paths.docs, "GET, HEAD, OPTIONS"]
        ]
        const headerSets: ReadonlyArray<[string, Record<string, string>]> = [
          ["no credentials", {}],
          ["a malformed token", { Authorization: "Bearer $" }],
          ["Basic", { Authorization: "Basic eDp5" }],
          ["a client", bearer(client)],
          ["a user", bearer(users.auth)]
        ]
        for (const [path, allow] of cases) {
          for (const [who, headers] of headerSets) {
            const res = await call({ method: "OPTIONS", path, headers })
            const label = `OPTIONS ${path}, ${who}`
            expect(res.status, show(label, res)).toBe(204)
            expectCommonHeaders(label, res)
            expect(res.headers["allow"], `${label}: Allow`).toBe(allow)
            expect(res.body.length, `${label}: no body`).toBe(0)
          }
        }
        expectProblem("OPTIONS on an unknown path", await call({ method: "OPTIONS", path: "/api/nope" }), NOT_FOUND)
      })

      it("HEAD is answered wherever GET is, with the same status and headers and no body", async () => {
        const cases: ReadonlyArray<[string, Record<string, string>, number]> = [
          [paths.preferences, bearer(users.pget), 200],
          [withoutSlash(paths.preferences), bearer(users.pget), 200],
          [paths.paymentMethods, bearer(users.other), 200],
          [paths.preferences, {}, 401],
          [paths.preferences, { Authorization: "Bearer $" }, 401],
          [paths.paymentMethods, bearer(client), 403]
        ]
        for (const [path, headers, status] of cases) {
          const get = await call({ method: "GET", path, headers })
          const head = await call({ method: "HEAD", path, headers })
          const label = `HEAD ${path} with ${headers["Authorization"]?.slice(0, 10) ?? "nothing"}`
          expect(get.status, show(`GET ${path}`, get)).toBe(status)
          expect(head.status, label).toBe(status)
          expectCommonHeaders(label, head)
          expect(head.headers["content-type"], `${label}: Content-Type`).toBe(get.headers["content-type"])
          expect(head.headers["www-authenticate"], `${label}: WWW-Authenticate`).toBe(get.headers["www-authenticate"])
          expect(head.body.length, `${label}: no body`).toBe(0)
        }
      })

      it("the operation paths answer identically with and without the trailing slash (no redirect)", async () => {
        const pairs: ReadonlyArray<[string, number, (path: string) => RawRequest]> = [
          [paths.preferences, 200, (path) => ({ method: "GET", path, headers: bearer(users.pslash) })],
          [
            paths.preferences,
            200,
            (path) => ({ method: "PUT", path, headers: jsonHeaders(users.pslash), body: '{"language":"pt-br"}' })
          ],
          [
            paths.preferences,
            400,
            (path) => ({ method: "PUT", path, headers: jsonHeaders(users.pslash), body: '{"timezone":7}' })
          ],
          [paths.preferences, 401, (path) => ({ method: "GET", path })],
          [paths.paymentMethods, 200, (path) => ({ method: "GET", path, headers: bearer(users.other) })],
          [paths.paymentMethod(fx.otherId), 200, (path) => ({ method: "PUT", path, headers: bearer(users.other) })],
          [
            paths.paymentMethod(`unknown_${run}`),
            404,
            (path) => ({ method: "PUT", path, headers: bearer(users.other) })
          ],
          [paths.planEntries, 400, (path) => ({ method: "POST", path, headers: jsonHeaders(users.auth), body: "{}" })]
        ]
        for (const [path, status, build] of pairs) {
          const slash = await call(build(path))
          const bare = await call(build(withoutSlash(path)))
          const label = `${build(path).method} ${withoutSlash(path)}(/)`
          expect(slash.status, show(label, slash)).toBe(status)
          expect(bare.headers["location"], `${label}: no redirect`).toBeUndefined()
          expect(bare.status, show(`${label} without slash`, bare)).toBe(slash.status)
          expect(bare.headers["content-type"], label).toBe(slash.headers["content-type"])
          expect(text(bare), label).toBe(text(slash))
        }
        const fresh = `slash.${run}@example.com`
        const withSlash = await postPlanEntry(users.auth, JSON.stringify({ email: fresh, password: "password" }))
        const noSlash = await postPlanEntry(
          users.auth,
          JSON.stringify({ email: `bare.${run}@example.com`, password: "password" }),
          withoutSlash(paths.planEntries)
        )
        expectJsonSuccess("POST plan entry with slash", withSlash, 201)
        expectJsonSuccess("POST plan entry without slash", noSlash, 201)
        expect(text(noSlash)).toBe(JSON.stringify({ email: `bare.${run}@example.com`, password: "********" }))
      })

      it("a payment method id outside [A-Za-z0-9_-]{1,100} is 404 after credentials (401 without them)", async () => {
        for (const id of ["pm.1", "pm~1", "pm%201", "a".repeat(101), "%C3%A9"]) {
          expectProblem(
            `PUT ${id} as the owner`,
            await call({ method: "PUT", path: paths.paymentMethod(id), headers: bearer(users.pay) }),
            NOT_FOUND
          )
          expectProblem(
            `PUT ${id} without credentials`,
            await call({ method: "PUT", path: paths.paymentMethod(id) }),
            UNAUTHENTICATED
          )
        }
        expectProblem(
          "PUT a well-formed 100-character id that does not exist",
          await call({ method: "PUT", path: paths.paymentMethod("a".repeat(100)), headers: bearer(users.pay) }),
          NOT_FOUND
        )
      })
    })

    // -------------------------------------------------------------------------------------------------------------
    describe("response headers", () => {
      const kinds = (): ReadonlyArray<[string, RawRequest]> => [
        ["200 health", { method: "GET", path: paths.health }],
        ["200 preferences", { method: "GET", path: paths.preferences, headers: bearer(users.pget) }],
        ["200 openapi", { method: "GET", path: paths.openapi }],
        ["400", { method: "PUT", path: paths.preferences, headers: jsonHeaders(users.pjson), body: "{" }],
        ["401", { method: "GET", path: paths.preferences }],
        ["403", { method: "GET", path: paths.preferences, headers: bearer(client) }],
        ["404", { method: "GET", path: "/api/nope" }],
        ["405", { method: "DELETE", path: paths.health }],
        [
          "413",
          { method: "PUT", path: paths.preferences, headers: jsonHeaders(users.pjson), body: "x".repeat(16_385) }
        ],
        ["415", { method: "PUT", path: paths.preferences, headers: jsonHeaders(users.pjson, "text/plain"), body: "x" }],
        ["204 OPTIONS", { method: "OPTIONS", path: paths.preferences }],
        ["200 HEAD", { method: "HEAD", path: paths.health }]
      ]

      it("Cache-Control: no-store, X-Content-Type-Options: nosniff and a valid X-Request-Id on every response", async () => {
        for (const [label, request] of kinds()) expectCommonHeaders(label, await call(request))
      })

      it("a valid incoming X-Request-Id is echoed", async () => {
        const ids = [`req-${run}`, `A.b_c-${run}`, "x", "z".repeat(128)]
        let index = 0
        for (const [label, request] of kinds()) {
          const id = ids[index++ % ids.length] ?? "x"
          const res = await call({ ...request, headers: { ...request.headers, "X-Request-Id": id } })
          expect(res.headers["x-request-id"], `${label}: echoed X-Request-Id`).toBe(id)
        }
      })

      it("an invalid or too long X-Request-Id is replaced by a fresh valid one", async () => {
        for (const invalid of ["", "z".repeat(129), "has space", "a/b", "a:b", "a,b", "é"]) {
          for (const [label, request] of kinds()) {
            const res = await call({ ...request, headers: { ...request.headers, "X-Request-Id": invalid } })
            const id = res.headers["x-request-id"]
            expect(id, `${label} with X-Request-Id ${JSON.stringify(invalid)}`).toMatch(REQUEST_ID_PATTERN)
            expect(id).not.toBe(invalid)
          }
        }
        const seen = new Set<string>()
        for (let attempt = 0; attempt < 5; attempt++) {
          seen.add(
            (await call({ method: "GET", path: paths.health, headers: { "X-Request-Id": "bad id" } })).headers[
              "x-request-id"
            ] ?? ""
          )
        }
        expect(seen.size, "generated request ids are fresh").toBe(5)
      })
    })

    // -------------------------------------------------------------------------------------------------------------
    describe("GET and PUT /api/payments/v1/payment-methods/", () => {
      it("the list holds the user's methods in code-point order of id, with the seeded default", async () => {
        const list = expectPaymentMethodList("GET list", await listPaymentMethods(users.pay))
        expect(list.map((method) => method.id)).toEqual(fx.payIds)
        expect(list.filter((method) => method.is_default).map((method) => method.id)).toEqual([fx.payDefault])
      })

      it("setting a default: 200 with is_default true; the previous default loses it and gets a new updated_at", async () => {
        const before = expectPaymentMethodList("list before", await listPaymentMethods(users.pay))
        const target = fx.payIds[4] ?? ""
        await pause(5)
        const res = await call({ method: "PUT", path: paths.paymentMethod(target), headers: bearer(users.pay) })
        const set = paymentMethod("PUT without a body", expectJsonSuccess("PUT without a body", res, 200))
        const targetBefore = before.find((method) => method.id === target)
        expect(set.id).toBe(target)
        expect(set.is_default).toBe(true)
        expect(set.created_at).toBe(targetBefore?.created_at)
        const after = expectPaymentMethodList("list after", await listPaymentMethods(users.pay))
        expect(after.map((method) => method.id)).toEqual(fx.payIds)
        expect(after.filter((method) => method.is_default).map((method) => method.id)).toEqual([target])
        expect(after.find((method) => method.id === target)).toEqual(set)
        const previousBefore = before.find((method) => method.id === fx.payDefault)
        const previousAfter = after.find((method) => method.id === fx.payDefault)
        expect(previousAfter?.is_default).toBe(false)
        expect(previousAfter?.created_at).toBe(previousBefore?.created_at)
        expect(
          (previousAfter?.updated_at ?? "") > (previousBefore?.updated_at ?? ""),
          "the previous default's updated_at moved"
        ).toBe(true)
        for (const id of fx.payIds.filter((id) => id !== target && id !== fx.payDefault)) {
          expect(
            after.find((method) => method.id === id),
            `${id} unchanged`
          ).toEqual(before.find((method) => method.id === id))
        }
      })

      it("repeating it is a no-op with the same body, for every accepted body form and both path forms", async () => {
        const target = fx.payIds[4] ?? ""
        const first = await call({ method: "PUT", path: paths.paymentMethod(target), headers: bearer(users.pay) })
        expectJsonSuccess("PUT again", first, 200)
        const forms: ReadonlyArray<[string, RawRequest]> = [
          ["{}", { method: "PUT", path: paths.paymentMethod(target), headers: jsonHeaders(users.pay), body: "{}" }],
          [
            '{"is_default":true}',
            {
              method: "PUT",
              path: paths.paymentMethod(target),
              headers: jsonHeaders(users.pay),
              body: '{"is_default":true}'
            }
          ],
          [
            "charset and spaces",
            {
              method: "PUT",
              path: paths.paymentMethod(target),
              headers: jsonHeaders(users.pay, "application/json; charset=utf-8"),
              body: ' { "is_default" : true } '
            }
          ],
          [
            "zero bytes, application/json",
            { method: "PUT", path: paths.paymentMethod(target), headers: jsonHeaders(users.pay), body: "" }
          ],
          [
            "zero bytes, text/plain",
            {
              method: "PUT",
              path: paths.paymentMethod(target),
              headers: jsonHeaders(users.pay, "text/plain"),
              body: ""
            }
          ],
          [
            "zero bytes, no Content-Type",
            { method: "PUT", path: paths.paymentMethod(target), headers: bearer(users.pay), body: "" }
          ],
          [
            "chunked {}",
            { method: "PUT", path: paths.paymentMethod(target), headers: jsonHeaders(users.pay), chunks: ["{", "}"] }
          ],
          [
            "no trailing slash",
            { method: "PUT", path: withoutSlash(paths.paymentMethod(target)), headers: bearer(users.pay) }
          ],
          [
            "Token scheme",
            { method: "PUT", path: paths.paymentMethod(target), headers: { Authorization: `Token ${users.pay.token}` } }
          ]
        ]
        for (const [label, request] of forms) {
          const res = await call(request)
          expectJsonSuccess(`PUT ${label}`, res, 200)
          expect(text(res), `PUT ${label}: same body`).toBe(text(first))
        }
        const list = expectPaymentMethodList("list", await listPaymentMethods(users.pay))
        expect(list.filter((method) => method.is_default).map((method) => method.id)).toEqual([target])
      })

      it("field errors on set-default leave the default where it was", async () => {
        const target = fx.payIds[1] ?? ""
        const before = await listPaymentMethods(users.pay)
        const cases: ReadonlyArray<[string, FieldErrors]> = [
          ['{"is_default":false}', [["/is_default", "not_allowed"]]],
          ['{"is_default":"true"}', [["/is_default", "invalid_type"]]],
          ['{"is_default":null}', [["/is_default", "invalid_type"]]],
          ['{"is_default":1}', [["/is_default", "invalid_type"]]],
          ['{"other":1}', [["/other", "unknown_field"]]],
          ['{"is_default":true,"id":"x"}', [["/id", "unknown_field"]]],
          [
            '{"z":1,"is_default":false}',
            [
              ["/is_default", "not_allowed"],
              ["/z", "unknown_field"]
            ]
          ]
        ]
        for (const [body, errors] of cases) {
          expectProblem(
            `PUT ${body}`,
            await call({ method: "PUT", path: paths.paymentMethod(target), headers: jsonHeaders(users.pay), body }),
            validation(errors)
          )
        }
        expectProblem(
          "PUT with invalid JSON",
          await call({
            method: "PUT",
            path: paths.paymentMethod(target),
            headers: jsonHeaders(users.pay),
            body: '{"is_default":true'
          }),
          INVALID_JSON
        )
        expect(text(await listPaymentMethods(users.pay)), "list unchanged").toBe(text(before))
      })

      it("ownership: another user's method or an unknown one is 404 not_found and nothing changes", async () => {
        const payBefore = await listPaymentMethods(users.pay)
        const otherBefore = await listPaymentMethods(users.other)
        for (const id of fx.payIds) {
          expectProblem(
            `other PUT pay's ${id}`,
            await call({ method: "PUT", path: paths.paymentMethod(id), headers: bearer(users.other) }),
            NOT_FOUND
          )
        }
        expectProblem(
          "pay PUT other's method",
          await call({ method: "PUT", path: paths.paymentMethod(fx.otherId), headers: bearer(users.pay) }),
          NOT_FOUND
        )
        expectProblem(
          "pay PUT an unknown method",
          await call({
            method: "PUT",
            path: paths.paymentMethod(`unknown_${run}`),
            headers: jsonHeaders(users.pay),
            body: '{"is_default":true}'
          }),
          NOT_FOUND
        )
        expect(text(await listPaymentMethods(users.pay)), "pay's list unchanged").toBe(text(payBefore))
        expect(text(await listPaymentMethods(users.other)), "other's list unchanged").toBe(text(otherBefore))
        const otherList = expectPaymentMethodList("other's list", otherBefore)
        expect(otherList.map((method) => [method.id, method.is_default])).toEqual([[fx.otherId, true]])
      })

      it("a user without payment methods gets an empty list", async () => {
        const list = expectPaymentMethodList("empty list", await listPaymentMethods(users.auth))
        expect(list).toEqual([])
        expect(text(await listPaymentMethods(users.auth))).toBe('{"data":[]}')
      })

      it("200 concurrent set-default requests over ten methods: all 200, then exactly one default", async () => {
        const requests = Array.from({ length: 200 }, (_, index) => {
          const id = fx.concIds[index % fx.concIds.length] ?? ""
          const request: RawRequest =
            index % 2 === 0
              ? { method: "PUT", path: paths.paymentMethod(id), headers: bearer(users.conc), timeoutMs: 15_000 }
              : {
                  method: "PUT",
                  path: paths.paymentMethod(id),
                  headers: jsonHeaders(users.conc),
                  body: '{"is_default":true}',
                  timeoutMs: 15_000
                }
          return { id, request }
        })
        const responses = await Promise.all(requests.map(({ request }) => call(request)))
        responses.forEach((res, index) => {
          const id = requests[index]?.id ?? ""
          const method = paymentMethod(
            `concurrent PUT ${id}`,
            expectJsonSuccess(`concurrent PUT ${id} #${index}`, res, 200)
          )
          expect(method.id).toBe(id)
          expect(method.is_default).toBe(true)
        })
        const list = expectPaymentMethodList("list after the burst", await listPaymentMethods(users.conc))
        expect(list.map((method) => method.id)).toEqual([...fx.concIds].sort())
        expect(list.filter((method) => method.is_default).length, "exactly one default").toBe(1)
      }, 30_000)
    })
  })
}
