import { PROBLEM_CODE_STATUS, REASON_PHRASES, type ProblemCode } from "@accord/contract"
import { REQUEST_ID_PATTERN, TIMESTAMP_PATTERN } from "../paths.js"
import type { RawResponse } from "../raw-http.js"
import { doesNotMatch, equal, fail, greaterThan, isTrue, matches } from "./assert.js"
import type { AuditTarget } from "./audit.js"

// What the contract says of a response, and the requests the audits send. Every helper checks the headers the
// contract puts on every response (docs/api.md, "Headers on every response").

// A frame's line is `\n` and spaces or tabs, then `at `: `\n\s+at ` would rescan a run of line feeds from each one
// (quadratic: a 64 KiB body of them held the event loop for seconds; docs/SECURITY.md, item 32).
const STACK_TRACE =
  /\n[ \t]+at |\bat [\w$.<>]+ \(|\.[cm]?[jt]s:\d+|node_modules|file:\/\/|\/work\/|\/home\/|\/usr\/|[A-Z]:\\/

export const text = (res: RawResponse): string => res.body.toString("utf8")

/** The status and the start of the body, for a failure message. */
export const show = (label: string, res: RawResponse): string => `${label} -> ${res.status} ${text(res).slice(0, 400)}`

export const expectStatus = (label: string, res: RawResponse, status: number): void => {
  if (res.status !== status) fail(`${show(label, res)}: expected status ${status}`)
}

/** Headers that differ between any two answers: the request id is fresh, the date may tick, the connection's own. */
const PER_ANSWER: ReadonlySet<string> = new Set(["x-request-id", "date", "connection", "keep-alive"])
/** How a body is framed: a runtime's, which a fetch handler called in process leaves out. */
const FRAMING: ReadonlySet<string> = new Set(["content-length", "transfer-encoding"])

/** A response's headers that two answers to the same request share; with `framing: false`, the framing left out too. */
export const comparableHeaders = (
  headers: Readonly<Record<string, string>>,
  { framing = true }: { readonly framing?: boolean } = {}
): Record<string, string> =>
  Object.fromEntries(
    Object.entries(headers).filter(([name]) => !PER_ANSWER.has(name) && (framing || !FRAMING.has(name)))
  )

/** Whether a response's `Vary` lists `name` (a list, any case; `*` varies on everything). */
export const variesOn = (res: RawResponse, name: string): boolean =>
  (res.headers["vary"] ?? "")
    .split(",")
    .some((member) => [name.toLowerCase(), "*"].includes(member.trim().toLowerCase()))

export const expectCommonHeaders = (label: string, res: RawResponse, cacheControl = "no-store"): void => {
  equal(res.headers["cache-control"], cacheControl, `${label}: Cache-Control`)
  equal(res.headers["x-content-type-options"], "nosniff", `${label}: X-Content-Type-Options`)
  matches(res.headers["x-request-id"], REQUEST_ID_PATTERN, `${label}: X-Request-Id`)
}

/**
 * docs/api.md, "Headers on every response": a docs file whose URL carries a version (`?v=`) is cached for a year;
 * the page and its unversioned files are revalidated, so a new release shows at once.
 */
export const VERSIONED_CACHE_CONTROL = "public, max-age=31536000, immutable"
export const UNVERSIONED_CACHE_CONTROL = "no-cache"
export const docsCacheControl = (target: URL): string =>
  target.searchParams.has("v") ? VERSIONED_CACHE_CONTROL : UNVERSIONED_CACHE_CONTROL

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

export const record = (label: string, value: unknown): Record<string, unknown> =>
  isRecord(value) ? value : fail(`${label}: expected a JSON object, got ${JSON.stringify(value)}`)

export const str = (label: string, value: unknown): string =>
  typeof value === "string" ? value : fail(`${label}: expected a string, got ${JSON.stringify(value)}`)

export const parseJson = (label: string, res: RawResponse): unknown => {
  try {
    return JSON.parse(text(res))
  } catch {
    return fail(`${label}: body is not JSON: ${JSON.stringify(text(res).slice(0, 200))}`)
  }
}

/** A success with a JSON body: status, headers, and compact serialisation (no spaces, no duplicate keys). */
export const expectJsonSuccess = (label: string, res: RawResponse, status: number, compact = true): unknown => {
  expectStatus(label, res, status)
  expectCommonHeaders(label, res)
  equal(res.headers["content-type"], "application/json; charset=utf-8", `${label}: Content-Type`)
  const body = parseJson(label, res)
  if (compact) equal(text(res), JSON.stringify(body), `${label}: compact JSON`)
  return body
}

export type FieldErrors = ReadonlyArray<readonly [pointer: string, code: string]>

/** A problem an audit expects: its code (its status is the contract's for that code) and what it must carry. */
export interface ProblemExpectation {
  readonly code: ProblemCode
  readonly errors?: FieldErrors
  readonly wwwAuthenticate?: string
  readonly allow?: string
  /** A HEAD request: the same status and headers, no body. */
  readonly head?: boolean
}

/**
 * docs/api.md, "Errors": the status the contract's problem table gives the code, the headers, exactly the problem's
 * keys, its code and its field errors.
 */
export const expectProblem = (label: string, res: RawResponse, expected: ProblemExpectation): void => {
  const status = PROBLEM_CODE_STATUS[expected.code]
  expectStatus(label, res, status)
  expectCommonHeaders(label, res)
  equal(res.headers["content-type"], "application/problem+json; charset=utf-8", `${label}: Content-Type`)
  // docs/api.md, "Conditional requests": an error describes no representation of the resource.
  equal(res.headers["etag"], undefined, `${label}: no ETag on an error`)
  if (expected.wwwAuthenticate !== undefined) {
    equal(res.headers["www-authenticate"], expected.wwwAuthenticate, `${label}: WWW-Authenticate`)
  }
  if (expected.allow !== undefined) equal(res.headers["allow"], expected.allow, `${label}: Allow`)
  if (expected.head === true) {
    equal(res.body.length, 0, `${label}: HEAD has no body`)
    return
  }
  doesNotMatch(text(res), STACK_TRACE, `${label}: no stack trace or file path`)
  const body = record(label, parseJson(label, res))
  const keys = ["type", "title", "status", "detail", "code", ...(expected.errors === undefined ? [] : ["errors"])]
  equal(Object.keys(body), keys, `${label}: problem keys`)
  equal(body["type"], "about:blank", `${label}: type`)
  equal(body["title"], REASON_PHRASES[status], `${label}: title`)
  equal(body["status"], status, `${label}: status member`)
  greaterThan(str(`${label}: detail`, body["detail"]).length, 0, `${label}: detail is not empty`)
  equal(body["code"], expected.code, `${label}: code`)
  if (expected.errors !== undefined) {
    const errors = body["errors"]
    if (!Array.isArray(errors)) return fail(`${label}: errors is not an array`)
    const seen = errors.map((entry: unknown, index) => {
      const error = record(`${label}: errors[${index}]`, entry)
      equal(Object.keys(error), ["pointer", "code", "detail"], `${label}: errors[${index}] keys`)
      greaterThan(
        str(`${label}: errors[${index}].detail`, error["detail"]).length,
        0,
        `${label}: errors[${index}].detail`
      )
      return [error["pointer"], error["code"]]
    })
    equal(seen, expected.errors, `${label}: errors (pointer, code), sorted by pointer`)
  }
}

export const validation = (errors: FieldErrors): ProblemExpectation => ({ code: "validation_failed", errors })
export const INVALID_JSON: ProblemExpectation = { code: "invalid_json" }
export const INVALID_BODY: ProblemExpectation = { code: "invalid_body" }
export const NOT_FOUND: ProblemExpectation = { code: "not_found" }
export const TOO_LARGE: ProblemExpectation = { code: "payload_too_large" }
export const UNSUPPORTED: ProblemExpectation = { code: "unsupported_media_type" }
export const FORBIDDEN: ProblemExpectation = { code: "insufficient_scope" }
export const PRECONDITION_FAILED: ProblemExpectation = { code: "precondition_failed" }
export const UNAUTHENTICATED: ProblemExpectation = { code: "unauthenticated", wwwAuthenticate: 'Bearer realm="api"' }
export const INVALID_TOKEN: ProblemExpectation = {
  code: "invalid_token",
  wwwAuthenticate: 'Bearer realm="api", error="invalid_token"'
}
export const notAllowed = (allow: string, head = false): ProblemExpectation => ({
  code: "method_not_allowed",
  allow,
  head
})

const expectTimestamp = (label: string, value: unknown): string => {
  const stamp = str(label, value)
  matches(stamp, TIMESTAMP_PATTERN, `${label}: UTC ISO 8601 with milliseconds`)
  equal(new Date(stamp).toISOString(), stamp, `${label}: a real instant`)
  return stamp
}

export interface Preferences {
  readonly id: number
  readonly language: string
  readonly timezone: number
  readonly mfa_enabled: boolean
  readonly created_at: string
  readonly updated_at: string
}

type PreferenceValues = Pick<Preferences, "language" | "timezone" | "mfa_enabled">

/** The defaults of a new record (docs/api.md, "Resources"). */
export const DEFAULT_PREFERENCES: PreferenceValues = { language: "en", timezone: 0, mfa_enabled: false }

export const expectPreferences = (label: string, res: RawResponse, values: PreferenceValues): Preferences => {
  const body = record(label, expectJsonSuccess(label, res, 200))
  equal(Object.keys(body), ["id", "language", "timezone", "mfa_enabled", "created_at", "updated_at"], `${label}: keys`)
  const id = body["id"]
  if (typeof id !== "number" || !Number.isSafeInteger(id)) return fail(`${label}: id is not an integer: ${String(id)}`)
  equal({ language: body["language"], timezone: body["timezone"], mfa_enabled: body["mfa_enabled"] }, values, label)
  const created_at = expectTimestamp(`${label}: created_at`, body["created_at"])
  const updated_at = expectTimestamp(`${label}: updated_at`, body["updated_at"])
  isTrue(updated_at >= created_at, `${label}: updated_at >= created_at`)
  return { id, ...values, created_at, updated_at }
}

export interface PaymentMethod {
  readonly id: string
  readonly is_default: boolean
  readonly created_at: string
  readonly updated_at: string
}

export const paymentMethod = (label: string, value: unknown): PaymentMethod => {
  const body = record(label, value)
  equal(Object.keys(body), ["id", "is_default", "created_at", "updated_at"], `${label}: keys`)
  const isDefault = body["is_default"]
  if (typeof isDefault !== "boolean") return fail(`${label}: is_default is not a boolean`)
  return {
    id: str(`${label}: id`, body["id"]),
    is_default: isDefault,
    created_at: expectTimestamp(`${label}: created_at`, body["created_at"]),
    updated_at: expectTimestamp(`${label}: updated_at`, body["updated_at"])
  }
}

export const expectPaymentMethodList = (label: string, res: RawResponse): ReadonlyArray<PaymentMethod> => {
  const body = record(label, expectJsonSuccess(label, res, 200))
  equal(Object.keys(body), ["data"], `${label}: keys`)
  const data = body["data"]
  if (!Array.isArray(data)) return fail(`${label}: data is not an array`)
  return data.map((entry: unknown, index) => paymentMethod(`${label}: data[${index}]`, entry))
}

export const defaults = (list: ReadonlyArray<PaymentMethod>): ReadonlyArray<string> =>
  list.filter((method) => method.is_default).map((method) => method.id)

// ---------------------------------------------------------------------------------------------------------------
// Requests

export const bearer = (token: string): Record<string, string> => ({ Authorization: `Bearer ${token}` })

export const jsonHeaders = (token: string, contentType = "application/json"): Record<string, string> => ({
  ...bearer(token),
  "Content-Type": contentType
})

export const putPreferences = (t: AuditTarget, token: string, body: string | Uint8Array, path = t.paths.preferences) =>
  t.send({ method: "PUT", path, headers: jsonHeaders(token), body })

export const getPreferences = (t: AuditTarget, token: string, path = t.paths.preferences) =>
  t.send({ method: "GET", path, headers: bearer(token) })

export const postPlanEntry = (t: AuditTarget, token: string, body: string, path = t.paths.planEntries) =>
  t.send({ method: "POST", path, headers: jsonHeaders(token), body })

export const listPaymentMethods = (t: AuditTarget, token: string) =>
  t.send({ method: "GET", path: t.paths.paymentMethods, headers: bearer(token) })

export const setDefault = (t: AuditTarget, token: string, id: string): Promise<RawResponse> =>
  t.send({ method: "PUT", path: t.paths.paymentMethod(id), headers: bearer(token) })

/**
 * Puts the user's preferences back to the defaults, so that an audit starts where a new user would, whatever ran
 * before it (the audits share the users they are given).
 */
export const resetPreferences = async (t: AuditTarget, token: string): Promise<Preferences> =>
  expectPreferences(
    "reset to the defaults",
    await putPreferences(t, token, JSON.stringify(DEFAULT_PREFERENCES)),
    DEFAULT_PREFERENCES
  )

/** An id no payment method has: the run's suffix makes it this run's own. */
export const unknownId = (t: AuditTarget): string => `unknown_${t.run}`

// ---------------------------------------------------------------------------------------------------------------
// Bodies

/** The body limit a server has unless its host sets another (docs/api.md, "Precise rules"): the audits assume it. */
export const BODY_LIMIT = 16_384

/** `prefix`, then spaces, then `suffix`: a valid JSON document of exactly `bytes` bytes. */
export const padded = (prefix: string, suffix: string, bytes: number): string => {
  const filler = bytes - Buffer.byteLength(prefix + suffix)
  if (filler < 0) throw new Error("padded: prefix and suffix are longer than the target size")
  return `${prefix}${" ".repeat(filler)}${suffix}`
}

export const nested = (field: string, depth: number): string => {
  // The outermost object is level 1; the arrays inside the field take the remaining levels.
  const arrays = depth - 1
  return `{"${field}":${"[".repeat(arrays)}${"]".repeat(arrays)}}`
}

export const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * How long a request whose announced body never comes waits for its answer. A server that answers without waiting
 * for the body answers at once; one that waits gets either its own request timeout (a 408, refused by the status
 * checks) or this. Long, so that a busy server is never mistaken for a waiting one.
 */
export const UNSENT_BODY_TIMEOUT_MS = 15_000

export const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>): Uint8Array =>
  Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part, "utf8") : Buffer.from(part))))
