import { FIELD_ISSUE_CODES } from "@accord/domain"
import { PROBLEM_CODE_STATUS, REASON_PHRASES } from "@accord/contract"
import { parseWire, REQUEST_ID_PATTERN, TIMESTAMP_PATTERN, type RawResponse } from "@accord/conformance"
import { bodyLength, isWireMethod, type FuzzCase, type FuzzFixture, type Target } from "./generators.js"

/**
 * The fuzz's oracle, without I/O: `expectedFor` says what the contract allows for a case (a set of statuses,
 * sometimes one code), `checkResponse` checks one answer for the contract's shape, `checkResult` also the answers of
 * requests Node's parser refuses, and the model (`applyToModel`, `checkList`) says how stored data may change: only
 * through 2xx answers.
 */

// ---------------------------------------------------------------------------------------------------------------
// What the contract allows

/** Every problem code with its status, and every field issue code: core's own lists (docs/api.md, "Errors"). */
const PROBLEM_CODES: Readonly<Record<string, number>> = PROBLEM_CODE_STATUS

const FIELD_CODES: ReadonlyArray<string> = FIELD_ISSUE_CODES

/** `Allow` of each route (its methods, HEAD where GET is, OPTIONS; sorted). */
const ALLOW: Readonly<Record<Exclude<Target["kind"], "none" | "too_long">, string>> = {
  plan: "OPTIONS, POST",
  preferences: "GET, HEAD, OPTIONS, PUT",
  list: "GET, HEAD, OPTIONS",
  method: "OPTIONS, PUT",
  health: "GET, HEAD, OPTIONS",
  openapi: "GET, HEAD, OPTIONS",
  docs: "GET, HEAD, OPTIONS",
  docs_asset: "GET, HEAD, OPTIONS"
}

const BODY_LIMIT = 16_384

interface Expected {
  readonly statuses: ReadonlyArray<number>
  /** The problem code when the contract fixes it. */
  readonly code?: string
}

const only = (status: number, code?: string): Expected =>
  code === undefined ? { statuses: [status] } : { statuses: [status], code }

/** The body stage (docs/api.md, "Errors": media type, size, JSON, fields) of an operation that reads one. */
const bodyStage = (fuzz: FuzzCase, success: number, required: boolean): Expected => {
  if (bodyLength(fuzz.body) === 0) return required ? only(400, "invalid_json") : only(success)
  const statuses = new Set<number>()
  if (fuzz.json !== true) statuses.add(415)
  if (fuzz.json !== false) {
    if (bodyLength(fuzz.body) > BODY_LIMIT) statuses.add(413)
    else if (fuzz.verdict === "valid") statuses.add(success)
    else {
      statuses.add(400)
      if (fuzz.verdict === "unknown") statuses.add(success)
    }
  }
  const list = [...statuses]
  if (list.length !== 1) return { statuses: list }
  const status = list[0] ?? 0
  if (status === 400 && (fuzz.verdict === "invalid_json" || fuzz.verdict === "invalid_body"))
    return only(400, fuzz.verdict)
  if (status === 400 && fuzz.verdict === "rejected") return only(400, "validation_failed")
  return only(
    status,
    ({ 404: "not_found", 413: "payload_too_large", 415: "unsupported_media_type" } as Record<number, string>)[status]
  )
}

/** The statuses (and code, where fixed) the contract allows for a request Node's parser accepts. */
const expectedFor = (fixture: FuzzFixture, fuzz: FuzzCase): Expected => {
  const { target } = fuzz
  if (target.kind === "too_long") return only(414, "uri_too_long")
  if (target.kind === "none") return only(404, "not_found")
  if (fuzz.method === "OPTIONS") return only(204)
  const method = fuzz.method === "HEAD" ? "GET" : fuzz.method
  const allowed = ALLOW[target.kind].split(", ").filter((name) => name !== "HEAD" && name !== "OPTIONS")
  if (!allowed.includes(method)) return only(405, "method_not_allowed")
  switch (target.kind) {
    case "health":
    case "openapi":
    case "docs":
      return only(200)
    case "docs_asset":
      return target.exists ? only(200) : only(404, "not_found")
    default:
      break
  }
  switch (fuzz.actor) {
    case "none":
      return only(401, "unauthenticated")
    case "malformed":
    case "unknown":
      return only(401, "invalid_token")
    case "random":
      return only(401)
    case "client":
      if (target.kind !== "plan") return only(403, "insufficient_scope")
      break
    default:
      break
  }
  if (method === "GET") return only(200)
  if (target.kind === "plan") return bodyStage(fuzz, 201, true)
  if (target.kind === "preferences") return bodyStage(fuzz, 200, true)
  if (target.kind === "method") {
    const own = fuzz.actor === "a" ? fixture.a.methods : fuzz.actor === "b" ? fixture.b.methods : []
    return bodyStage(fuzz, own.includes(target.id) ? 200 : 404, false)
  }
  return { statuses: [] }
}

// ---------------------------------------------------------------------------------------------------------------
// Checking a response

/** A stack frame, a source position, or an absolute path on the server: never in a response. */
const INTERNALS =
  /\n\s+at |\bat [\w$.<>]+ \(|\.[cm]?[jt]s:\d+|node_modules|file:\/\/|\/work\/|\/home\/|\/usr\/|[A-Z]:\\/

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const requestText = (fuzz: FuzzCase): string =>
  `${fuzz.path} ${fuzz.authorization ?? ""} ${fuzz.contentType ?? ""} ${fuzz.requestId ?? ""} ${
    fuzz.body === undefined ? "" : typeof fuzz.body === "string" ? fuzz.body : Buffer.from(fuzz.body).toString("latin1")
  }`

const parseBody = (response: RawResponse): unknown => {
  try {
    return JSON.parse(response.body.toString("utf8"))
  } catch {
    return undefined
  }
}

const sameKeys = (value: Record<string, unknown>, keys: ReadonlyArray<string>): boolean =>
  JSON.stringify(Object.keys(value)) === JSON.stringify(keys)

const SUCCESS_TYPES: Readonly<Record<string, string>> = {
  docs: "text/html; charset=utf-8",
  docs_asset: "text/javascript; charset=utf-8"
}

/**
 * The docs page and init.js, whose URLs carry no version, are revalidated rather than not stored (docs/api.md,
 * "Headers on every response"); every other response is `no-store`.
 */
const DOCS_CACHE_CONTROL = "no-cache"

const JSON_TYPE = "application/json; charset=utf-8"

const PROBLEM_TYPE = "application/problem+json; charset=utf-8"

const PREFERENCE_KEYS = ["id", "language", "timezone", "mfa_enabled", "created_at", "updated_at"] as const

const METHOD_KEYS = ["id", "is_default", "created_at", "updated_at"] as const

export const isPreferences = (value: unknown): value is Record<(typeof PREFERENCE_KEYS)[number], unknown> =>
  isRecord(value) &&
  sameKeys(value, PREFERENCE_KEYS) &&
  Number.isInteger(value["id"]) &&
  typeof value["language"] === "string" &&
  Number.isInteger(value["timezone"]) &&
  typeof value["mfa_enabled"] === "boolean" &&
  TIMESTAMP_PATTERN.test(String(value["created_at"])) &&
  TIMESTAMP_PATTERN.test(String(value["updated_at"]))

interface MethodView {
  readonly id: string
  readonly is_default: boolean
  readonly created_at: string
  readonly updated_at: string
}

const isMethodView = (value: unknown): value is MethodView =>
  isRecord(value) &&
  sameKeys(value, METHOD_KEYS) &&
  typeof value["id"] === "string" &&
  typeof value["is_default"] === "boolean" &&
  TIMESTAMP_PATTERN.test(String(value["created_at"])) &&
  TIMESTAMP_PATTERN.test(String(value["updated_at"]))

/** The success body's shape for the target; the list must hold exactly the caller's own methods. */
const successProblems = (
  fixture: FuzzFixture,
  fuzz: FuzzCase,
  status: number,
  body: unknown
): ReadonlyArray<string> => {
  const { target } = fuzz
  switch (target.kind) {
    case "plan":
      return status === 201 &&
        isRecord(body) &&
        sameKeys(body, ["email", "password"]) &&
        typeof body["email"] === "string" &&
        body["password"] === "********"
        ? []
        : ["plan entry: expected 201 {email, password: ********}"]
    case "preferences":
      return isPreferences(body) ? [] : ["preferences: not a preferences record"]
    case "list": {
      const own = fuzz.actor === "a" ? fixture.a.methods : fixture.b.methods
      if (
        !isRecord(body) ||
        !sameKeys(body, ["data"]) ||
        !Array.isArray(body["data"]) ||
        !body["data"].every(isMethodView)
      )
        return ["list: not {data: [PaymentMethod]}"]
      const ids = body["data"].map((method) => method.id)
      const problems: Array<string> = []
      if (JSON.stringify(ids) !== JSON.stringify(own))
        problems.push(`list: ids ${JSON.stringify(ids)}, expected the caller's own ${JSON.stringify(own)}`)
      if (body["data"].filter((method) => method.is_default).length > 1) problems.push("list: more than one default")
      return problems
    }
    case "method":
      return isMethodView(body) && body.id === target.id && body.is_default
        ? []
        : ["set default: expected the method with is_default true"]
    case "health":
      return JSON.stringify(body) === '{"status":"ok"}' ? [] : ["health: expected {status: ok}"]
    case "openapi":
      return isRecord(body) && String(body["openapi"]).startsWith("3.1")
        ? []
        : ["openapi.json: not an OpenAPI 3.1 document"]
    default:
      return []
  }
}

/** The problem body: exactly the contract's keys, a known code that fits the status, sorted field errors. */
const problemProblems = (status: number, body: unknown): ReadonlyArray<string> => {
  if (!isRecord(body)) return ["problem: body is not a JSON object"]
  const code = body["code"]
  const problems: Array<string> = []
  const withErrors = code === "validation_failed"
  if (!sameKeys(body, ["type", "title", "status", "detail", "code", ...(withErrors ? ["errors"] : [])]))
    problems.push(`problem: keys ${JSON.stringify(Object.keys(body))}`)
  if (body["type"] !== "about:blank") problems.push("problem: type is not about:blank")
  if (body["title"] !== REASON_PHRASES[status]) problems.push(`problem: title ${String(body["title"])}`)
  if (body["status"] !== status) problems.push("problem: status member differs from the status")
  if (typeof body["detail"] !== "string" || body["detail"] === "") problems.push("problem: empty detail")
  if (typeof code !== "string" || PROBLEM_CODES[code] !== status)
    problems.push(`problem: code ${String(code)} does not belong to ${status}`)
  if (withErrors) {
    const errors = body["errors"]
    if (!Array.isArray(errors) || errors.length === 0) problems.push("problem: validation_failed without errors")
    else {
      const pointers: Array<string> = []
      for (const entry of errors) {
        if (!isRecord(entry) || !sameKeys(entry, ["pointer", "code", "detail"]))
          problems.push("problem: an errors entry is not {pointer, code, detail}")
        else {
          if (typeof entry["pointer"] !== "string" || !entry["pointer"].startsWith("/"))
            problems.push("problem: bad pointer")
          if (!FIELD_CODES.includes(String(entry["code"])))
            problems.push(`problem: field code ${String(entry["code"])}`)
          if (typeof entry["detail"] !== "string" || entry["detail"] === "")
            problems.push("problem: empty field detail")
          pointers.push(String(entry["pointer"]))
        }
      }
      const sorted = [...pointers].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))
      if (JSON.stringify(sorted) !== JSON.stringify(pointers)) problems.push("problem: errors not sorted by pointer")
    }
  }
  return problems
}

/**
 * Everything the contract says about one response to `fuzz`, as a list of violations (empty: conforming). Checks
 * the status against `expectedFor`, the common headers and the request id, the problem shape, success shapes,
 * that no password of the request and nothing internal shows in the body.
 */
export const checkResponse = (fixture: FuzzFixture, fuzz: FuzzCase, response: RawResponse): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const expected = expectedFor(fixture, fuzz)
  const { status, headers } = response
  const text = response.body.toString("utf8")
  if (!expected.statuses.includes(status))
    problems.push(`status ${status}, expected one of ${expected.statuses.join(", ")}`)
  if (status >= 500) problems.push(`a ${status}`)
  const docsFile = status === 200 && (fuzz.target.kind === "docs" || fuzz.target.kind === "docs_asset")
  const cacheControl = docsFile ? DOCS_CACHE_CONTROL : "no-store"
  if (headers["cache-control"] !== cacheControl) problems.push(`Cache-Control ${String(headers["cache-control"])}`)
  if (headers["x-content-type-options"] !== "nosniff") problems.push("X-Content-Type-Options missing")
  const sentId = fuzz.requestId?.replace(/^[ \t]+|[ \t]+$/g, "")
  const receivedId = headers["x-request-id"] ?? ""
  if (!REQUEST_ID_PATTERN.test(receivedId)) problems.push(`X-Request-Id ${JSON.stringify(receivedId)}`)
  else if (sentId !== undefined && REQUEST_ID_PATTERN.test(sentId) !== (receivedId === sentId))
    problems.push(`X-Request-Id ${receivedId} for ${JSON.stringify(sentId)}`)
  const bodyless = fuzz.method === "HEAD" || status === 204
  if (bodyless && response.body.length > 0) problems.push("a body on HEAD or 204")
  if (status === 204 || status === 405) {
    if (fuzz.target.kind !== "none" && fuzz.target.kind !== "too_long" && headers["allow"] !== ALLOW[fuzz.target.kind])
      problems.push(`Allow ${String(headers["allow"])}`)
  }
  if (status === 204) {
    if (headers["content-type"] !== undefined) problems.push("a Content-Type on 204")
  } else if (status >= 400) {
    if (headers["content-type"] !== PROBLEM_TYPE)
      problems.push(`Content-Type ${String(headers["content-type"])} on an error`)
    if (expected.code !== undefined && !bodyless && !text.includes(`"code":"${expected.code}"`))
      problems.push(`expected code ${expected.code}`)
    if (status === 401) {
      const realm = 'Bearer realm="api"'
      const allowedChallenges =
        fuzz.actor === "none"
          ? [realm]
          : fuzz.actor === "random"
            ? [realm, `${realm}, error="invalid_token"`]
            : [`${realm}, error="invalid_token"`]
      if (!allowedChallenges.includes(headers["www-authenticate"] ?? ""))
        problems.push(`WWW-Authenticate ${String(headers["www-authenticate"])}`)
    }
    if (status === 403 && headers["www-authenticate"] !== 'Bearer realm="api", error="insufficient_scope"')
      problems.push("WWW-Authenticate on 403")
    if (!bodyless) problems.push(...problemProblems(status, parseBody(response)))
  } else {
    const contentType = SUCCESS_TYPES[fuzz.target.kind] ?? JSON_TYPE
    if (headers["content-type"] !== contentType)
      problems.push(`Content-Type ${String(headers["content-type"])} on a success`)
    if (!bodyless && contentType === JSON_TYPE)
      problems.push(...successProblems(fixture, fuzz, status, parseBody(response)))
  }
  for (const password of fuzz.passwords) {
    if (
      [...password].length >= 8 &&
      !/^\**$/.test(password) &&
      (text.includes(password) || text.includes(JSON.stringify(password).slice(1, -1)))
    ) {
      problems.push("the response contains a password of the request")
    }
  }
  const internal = INTERNALS.exec(text)
  if (internal !== null && !requestText(fuzz).includes(internal[0]))
    problems.push(`internal detail in the body: ${JSON.stringify(internal[0])}`)
  return problems
}

// ---------------------------------------------------------------------------------------------------------------
// Checking a result, answers on the wire included

export type FuzzResult =
  | { readonly kind: "http"; readonly response: RawResponse }
  /** Everything a raw socket received, and whether the server closed it. */
  | { readonly kind: "wire"; readonly wire: string; readonly closed: boolean }
  | { readonly kind: "error"; readonly message: string }

/**
 * A request Node's parser refuses never reaches an adapter: the answer is @accord/node's `400 bad_request` problem
 * with the common headers (a new request id: none was read) and `Connection: close`, and the connection closes.
 */
const wireProblems = (result: { readonly wire: string; readonly closed: boolean }): ReadonlyArray<string> => {
  const response = parseWire(result.wire)
  if (response === undefined) return [`not an HTTP response: ${JSON.stringify(result.wire.slice(0, 200))}`]
  const problems: Array<string> = []
  if (response.status !== 400) problems.push(`status ${response.status} for a request Node cannot parse`)
  if (!result.closed || response.headers["connection"] !== "close")
    problems.push("the connection stays open after a parse error")
  if (response.headers["content-type"] !== PROBLEM_TYPE)
    problems.push(`Content-Type ${String(response.headers["content-type"])}`)
  if (response.headers["cache-control"] !== "no-store") problems.push("Cache-Control missing")
  if (response.headers["x-content-type-options"] !== "nosniff") problems.push("X-Content-Type-Options missing")
  if (!REQUEST_ID_PATTERN.test(response.headers["x-request-id"] ?? "")) problems.push("X-Request-Id missing")
  if (Number(response.headers["content-length"]) !== response.body.length)
    problems.push("Content-Length differs from the body")
  const body = parseBody(response)
  problems.push(...problemProblems(400, body))
  if (isRecord(body) && body["code"] !== "bad_request")
    problems.push(`code ${String(body["code"])}, expected bad_request`)
  return problems
}

/** Violations of one result: a wire case must get the parse-error problem, anything else `checkResponse`. */
export const checkResult = (fixture: FuzzFixture, fuzz: FuzzCase, result: FuzzResult): ReadonlyArray<string> => {
  if (result.kind === "error") return [`no response: ${result.message}`]
  if (result.kind === "wire") return wireProblems(result)
  if (isWireMethod(fuzz.method)) return ["a wire case answered over HTTP"]
  return checkResponse(fixture, fuzz, result.response)
}

// ---------------------------------------------------------------------------------------------------------------
// Stored data: only 2xx requests change it

interface MethodModel {
  readonly id: string
  readonly is_default: boolean
  readonly created_at: string
  /** Unknown after the method lost the default (the store picked the time). */
  readonly updated_at: string | undefined
}

/** What a user's data must be: the preferences record and the payment methods, as the API last showed them. */
export interface UserModel {
  preferences: Readonly<Record<string, unknown>>
  methods: ReadonlyArray<MethodModel>
}

export interface FuzzModels {
  readonly a: UserModel
  readonly b: UserModel
}

export const listOf = (list: unknown): ReadonlyArray<MethodView> | undefined =>
  isRecord(list) && Array.isArray(list["data"]) && list["data"].every(isMethodView) ? list["data"] : undefined

/** Compares a list the API returned with the model and learns the update times the model did not know. */
export const checkList = (
  model: UserModel,
  listed: ReadonlyArray<MethodView>,
  label: string
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const expected = model.methods.map(({ id, is_default, created_at }) => ({ id, is_default, created_at }))
  const actual = listed.map(({ id, is_default, created_at }) => ({ id, is_default, created_at }))
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    problems.push(`${label}: payment methods ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`)
  listed.forEach((method, index) => {
    const known = model.methods[index]?.updated_at
    if (known !== undefined && method.updated_at !== known)
      problems.push(`${label}: ${method.id} updated_at changed without a successful request`)
  })
  if (problems.length === 0) model.methods = listed.map((method) => ({ ...method }))
  return problems
}

const PREFERENCE_VALUES = ["language", "timezone", "mfa_enabled"] as const

/**
 * Applies one answered request of `actor`'s lane to its model, in the lane's order, and reports where the API
 * contradicts it: a read that shows a change no 2xx made, a 2xx write that changes what it must not.
 */
export const applyToModel = (
  fixture: FuzzFixture,
  model: UserModel,
  fuzz: FuzzCase,
  response: RawResponse
): ReadonlyArray<string> => {
  if (response.status < 200 || response.status > 299 || fuzz.method === "HEAD" || response.status === 204) return []
  const body = parseBody(response)
  const { target } = fuzz
  if (target.kind === "preferences" && isPreferences(body)) {
    const before = model.preferences
    const problems: Array<string> = []
    if (fuzz.method === "GET") {
      if (JSON.stringify(body) !== JSON.stringify(before))
        problems.push(`preferences read ${JSON.stringify(body)}, expected ${JSON.stringify(before)}`)
    } else {
      if (body.id !== before["id"] || body.created_at !== before["created_at"])
        problems.push("preferences: id or created_at changed")
      const changed = PREFERENCE_VALUES.some((name) => body[name] !== before[name])
      if (!changed && body.updated_at !== before["updated_at"])
        problems.push("preferences: updated_at changed though no value did")
      if (changed && String(body.updated_at) < String(before["updated_at"]))
        problems.push("preferences: updated_at went back")
    }
    model.preferences = body
    return problems
  }
  if (target.kind === "list") {
    const listed = listOf(body)
    return listed === undefined ? [] : checkList(model, listed, "list")
  }
  if (target.kind === "method" && isMethodView(body)) {
    const own = fuzz.actor === "a" ? fixture.a.methods : fixture.b.methods
    if (!own.includes(body.id)) return [`set default answered 200 for ${body.id}, which is not the caller's`]
    const current = model.methods.find((method) => method.id === body.id)
    if (current === undefined) return [`set default: ${body.id} is not in the model`]
    const problems: Array<string> = []
    if (current.created_at !== body.created_at) problems.push("set default: created_at changed")
    if (current.is_default && current.updated_at !== undefined && current.updated_at !== body.updated_at)
      problems.push("set default: repeating it changed updated_at")
    model.methods = model.methods.map((method) =>
      method.id === body.id
        ? { ...body }
        : method.is_default
          ? { ...method, is_default: false, updated_at: undefined }
          : method
    )
    return problems
  }
  return []
}
