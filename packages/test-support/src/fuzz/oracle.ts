import { boundedMemo, FIELD_ISSUE_CODES, resultDecoderFor } from "@accord/domain"
import {
  appliesTo,
  DOMAIN_ERRORS,
  PIPELINE,
  PROBLEM_CODE_STATUS,
  problemCodesOf,
  REASON_PHRASES,
  type DomainErrorTag,
  type PipelineCheckId,
  type ProblemCode,
  type QuerySchema
} from "@accord/contract"
import { queryDecoderFor } from "@accord/core"
import { parseWire, REQUEST_ID_PATTERN, TIMESTAMP_PATTERN, type RawResponse } from "@accord/conformance"
import { Exit, Result, Schema, SchemaAST } from "effect"
import type { FuzzFixture, FuzzUser } from "./fixture.js"
import { bodyLength, isWireMethod, type FuzzCase } from "./fuzz-case.js"
import { declaredOutcome, declaredSuccess, type UserModel } from "./models.js"
import {
  BODY_LIMIT,
  DOCS_FILES,
  DOCUMENT_ALLOW,
  isRecord,
  operationOn,
  rawQuery,
  targetOf,
  type ContractOperation,
  type Target
} from "./targets.js"

/**
 * The fuzz's oracle, without I/O. `judgeCase` walks the contract's order of checks (`PIPELINE`, each check where
 * `appliesTo` says it applies) and decides each from the request as the contract says, so the first refusal gives the
 * answer; past them, the operation's success or one of its declared errors. `checkResponse` checks one answer against
 * that and the contract's shapes (problems, success bodies decoded with the operation's own Schema), and
 * `checkResult` also the answers of requests Node's parser refuses.
 */

// ---------------------------------------------------------------------------------------------------------------
// What the contract allows

/** An answer the contract allows: its status, and its problem code where the contract fixes one. */
export interface Outcome {
  readonly status: number
  readonly code?: ProblemCode
}

/** What one check makes of a request: the answers it may give, and whether the request may also go on past it. */
export interface Decision {
  readonly answers: ReadonlyArray<Outcome>
  readonly passes: boolean
}

/** A case as the contract reads it, before any check. */
export interface FuzzRequest {
  readonly fixture: FuzzFixture
  readonly fuzz: FuzzCase
  readonly target: Target
  /** The operation the method names on the target's route; undefined for anything else. */
  readonly operation: ContractOperation | undefined
  /** The user whose credential the request carries, if any. */
  readonly caller: FuzzUser | undefined
  /** What the fuzz knows of the caller's stored data when the request is sent; undefined: the seed's, as stored. */
  readonly model: UserModel | undefined
}

/** A case with every answer the contract allows it. */
export interface Judged extends FuzzRequest {
  /** Any one of these is a conforming answer. */
  readonly outcomes: ReadonlyArray<Outcome>
  /** Whether the request passes every check for certain, so that the operation's use case runs. */
  readonly reachesUseCase: boolean
}

const PASS: Decision = { answers: [], passes: true }

const refuse = (code: ProblemCode): Decision => ({
  answers: [{ status: PROBLEM_CODE_STATUS[code], code }],
  passes: false
})

/** Any of `decisions` may happen. */
const either = (...decisions: ReadonlyArray<Decision>): Decision => ({
  answers: decisions.flatMap((decision) => decision.answers),
  passes: decisions.some((decision) => decision.passes)
})

/** `first`, and where it lets the request on, `next`: two steps of one check. */
const followedBy = (first: Decision, next: () => Decision): Decision => {
  if (!first.passes) return first
  const second = next()
  return { answers: [...first.answers, ...second.answers], passes: second.passes }
}

/** Whether the request sends a body (docs/api.md, "Precise rules"): a chunked one counts, else a positive length. */
const sendsBody = (fuzz: FuzzCase): boolean => fuzz.transferEncoding !== undefined || bodyLength(fuzz.body) > 0

/** A transfer coding other than chunked (501: the body is never read as if it were not there). */
const unimplementedCoding = (transferEncoding: string | undefined): boolean =>
  transferEncoding !== undefined &&
  transferEncoding.split(",").some((coding) => coding.trim().toLowerCase() !== "chunked")

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/** The body as strict JSON (UTF-8, no byte-order mark), or undefined; duplicate keys and depth are not looked at. */
const parsedBody = (body: FuzzCase["body"]): { readonly value: unknown } | undefined => {
  try {
    return { value: JSON.parse(typeof body === "string" ? body : utf8.decode(body)) as unknown }
  } catch {
    return undefined
  }
}

/** The JSON the fields' check decodes: the body's object, or `{}` for no body (docs/api.md, "Precise rules"). */
const fieldsInput = (fuzz: FuzzCase): unknown => (bodyLength(fuzz.body) === 0 ? {} : parsedBody(fuzz.body)?.value)

/** Decoders compiled once per Schema: the contract has a few dozen at most. */
const SCHEMAS = 64

/** The operation's own body decoder, as the handler compiles it (`resultDecoderFor`): every field, unknown ones refused. */
const bodyDecoderOf = boundedMemo(SCHEMAS, (schema: Schema.Decoder<unknown>) => resultDecoderFor(schema))

/** A path parameters Schema's decoder, with the options the handler decodes them with (none). */
const paramsDecoderOf = boundedMemo(SCHEMAS, (schema: Schema.Decoder<unknown>) => Schema.decodeUnknownExit(schema))

/** A query Schema's decoder, as the handler compiles it (`queryDecoderFor`). */
const queryDecoderOf = boundedMemo(SCHEMAS, (schema: QuerySchema) => queryDecoderFor(schema))

/** A success Schema's decoder (no key besides its own) and its encoder, which writes a value as the Schema does. */
const successCodecOf = boundedMemo(SCHEMAS, (schema: Schema.Codec<unknown, unknown>) => ({
  decode: Schema.decodeUnknownExit(schema, { onExcessProperty: "error" }),
  encode: Schema.encodeUnknownSync(schema)
}))

/**
 * Declared errors the fuzz cannot provoke: it sends no If-Match, so nothing it writes is stale, and its servers' stores
 * are in memory, always reachable.
 */
const UNPROVOKED: ReadonlySet<DomainErrorTag> = new Set(["PreconditionFailed", "Unavailable"])

/** What the route answers a document's path (docs/api.md, "Routes"): the file to GET and HEAD, 204 to OPTIONS. */
const documentDecision = (target: Extract<Target, { kind: "document" }>, method: string): Decision => {
  if (method === "OPTIONS") return { answers: [{ status: 204 }], passes: false }
  if (method !== "GET" && method !== "HEAD") return refuse("method_not_allowed")
  const exists = target.name !== "docs_file" || (target.asset !== undefined && target.asset in DOCS_FILES)
  return exists ? { answers: [{ status: 200 }], passes: false } : refuse("not_found")
}

/**
 * Each check of the contract's order decided from a request, as docs/api.md ("Errors", "Precise rules") says. A check
 * added to `PIPELINE` does not compile until the fuzz decides it here.
 */
const DECIDE: { readonly [Id in PipelineCheckId]: (request: FuzzRequest) => Decision } = {
  // Requests Node's parser refuses are wire cases (`checkResult`); the fuzz's timely, small heads pass.
  http: () => PASS,
  // The fuzz sends no Expect.
  expectation: () => PASS,
  path: ({ target }) => (target.kind === "too_long" ? refuse("uri_too_long") : PASS),
  route: ({ target, fuzz, operation }) => {
    if (target.kind === "none" || target.kind === "too_long") return refuse("not_found")
    if (target.kind === "document") return documentDecision(target, fuzz.method)
    if (fuzz.method === "OPTIONS") return { answers: [{ status: 204 }], passes: false }
    return operation === undefined ? refuse("method_not_allowed") : PASS
  },
  // The fuzz targets the route table, whose paths are no alias (docs/api.md, "Versioning"): none is past a sunset.
  sunset: () => PASS,
  // The fuzz's servers do not drain.
  draining: () => PASS,
  credential: ({ fuzz }) => {
    switch (fuzz.actor) {
      case "none":
        return refuse("unauthenticated")
      case "malformed":
      case "unknown":
        return refuse("invalid_token")
      case "random":
        return either(refuse("unauthenticated"), refuse("invalid_token"))
      default:
        return PASS
    }
  },
  // The fuzz's servers limit no rate.
  "rate-limit": () => PASS,
  scope: ({ fuzz }) => (fuzz.actor === "client" ? refuse("insufficient_scope") : PASS),
  // The fuzz sends no Accept: every operation answers JSON.
  accept: () => PASS,
  // The fuzz's servers do not require If-Match.
  "if-match-required": () => PASS,
  "body-headers": ({ fuzz }) => {
    if (!sendsBody(fuzz)) return PASS
    if (unimplementedCoding(fuzz.transferEncoding)) return refuse("not_implemented")
    const mediaType =
      fuzz.json === true
        ? PASS
        : fuzz.json === false
          ? refuse("unsupported_media_type")
          : either(refuse("unsupported_media_type"), PASS)
    // Only a Content-Length declares a size; a chunked body is measured as it is read (the next check).
    return followedBy(mediaType, () =>
      fuzz.transferEncoding === undefined && bodyLength(fuzz.body) > BODY_LIMIT ? refuse("payload_too_large") : PASS
    )
  },
  body: ({ fuzz, operation }) => {
    const length = bodyLength(fuzz.body)
    if (length === 0) return operation?.body?.required === true ? refuse("invalid_json") : PASS
    if (length > BODY_LIMIT) return refuse("payload_too_large")
    switch (fuzz.syntax) {
      case "object":
        return PASS
      case "invalid_json":
        return refuse("invalid_json")
      case "invalid_body":
        return refuse("invalid_body")
      case "unknown": {
        // Random bytes: what parses may still hold a duplicate key or be too deep.
        const parsed = parsedBody(fuzz.body)
        if (parsed === undefined) return refuse("invalid_json")
        return isRecord(parsed.value)
          ? either(refuse("invalid_json"), PASS)
          : either(refuse("invalid_json"), refuse("invalid_body"))
      }
    }
  },
  fields: ({ fuzz, operation }) => {
    const schema = operation?.body?.schema
    const input = fieldsInput(fuzz)
    if (schema === undefined || !isRecord(input)) return PASS
    return Result.isSuccess(bodyDecoderOf(schema)(input)) ? PASS : refuse("validation_failed")
  },
  "path-parameters": ({ target, operation }) => {
    if (operation?.params === undefined || target.kind !== "route") return PASS
    return Exit.isSuccess(paramsDecoderOf(operation.params)(target.params)) ? PASS : refuse("not_found")
  },
  // The operation's own query decoder, as the handler compiles it: the target's query, as sent.
  query: ({ fuzz, operation }) => {
    if (operation?.query === undefined) return PASS
    return Result.isSuccess(queryDecoderOf(operation.query)(rawQuery(fuzz.path))) ? PASS : refuse("invalid_query")
  },
  // The fuzz never asks for a stream (no Accept).
  streams: () => PASS,
  "use-case": (request) => {
    const { operation } = request
    if (operation === undefined) return PASS
    // What the declaration decides (an item the caller has or not), and any other declared error it may meet.
    const declared = declaredOutcome(request, request.model)
    const others = operation.errors.flatMap((tag) =>
      UNPROVOKED.has(tag) || (declared !== undefined && tag === "NotFound")
        ? []
        : DOMAIN_ERRORS[tag].codes.map((code) => refuse(code))
    )
    if (declared === undefined) return either(PASS, ...others)
    return declared.passes ? either(declared, ...others) : declared
  },
  // The fuzz sends no If-None-Match.
  "if-none-match": () => PASS,
  // A 500 is a violation on its own (`checkResponse`).
  internal: () => PASS
}

/**
 * Every answer the contract allows `fuzz`: the checks of `PIPELINE` in order, each where it applies to the operation
 * (`appliesTo`), until one refuses for certain; past them all, the operation's success status.
 */
export const judgeCase = (fixture: FuzzFixture, fuzz: FuzzCase, model?: UserModel): Judged => {
  const target = targetOf(fuzz.path)
  const operation = target.kind === "route" ? operationOn(target.route, fuzz.method) : undefined
  const caller = fuzz.actor === "a" ? fixture.a : fuzz.actor === "b" ? fixture.b : undefined
  const request: FuzzRequest = { fixture, fuzz, target, operation, caller, model }
  const outcomes: Array<Outcome> = []
  let certain = true
  let reachesUseCase = false
  for (const check of PIPELINE) {
    if (check.perOperation && operation !== undefined && !appliesTo(check, operation)) continue
    if (check.id === "use-case") reachesUseCase = certain
    const decision = DECIDE[check.id](request)
    outcomes.push(...decision.answers)
    if (!decision.passes) return { ...request, outcomes, reachesUseCase }
    if (decision.answers.length > 0) certain = false
  }
  if (operation !== undefined) outcomes.push({ status: operation.success.status })
  return { ...request, outcomes, reachesUseCase }
}

// ---------------------------------------------------------------------------------------------------------------
// Checking a response

/** A stack frame, a source position, or an absolute path on the server: never in a response. */
const INTERNALS =
  /\n\s+at |\bat [\w$.<>]+ \(|\.[cm]?[jt]s:\d+|node_modules|file:\/\/|\/work\/|\/home\/|\/usr\/|[A-Z]:\\/

const requestText = (fuzz: FuzzCase): string =>
  `${fuzz.path} ${fuzz.authorization ?? ""} ${fuzz.contentType ?? ""} ${fuzz.requestId ?? ""} ${
    fuzz.body === undefined ? "" : typeof fuzz.body === "string" ? fuzz.body : Buffer.from(fuzz.body).toString("latin1")
  }`

export const parseBody = (response: RawResponse): unknown => {
  try {
    return JSON.parse(response.body.toString("utf8"))
  } catch {
    return undefined
  }
}

const sameKeys = (value: Readonly<Record<string, unknown>>, keys: ReadonlyArray<string>): boolean =>
  JSON.stringify(Object.keys(value)) === JSON.stringify(keys)

const JSON_TYPE = "application/json; charset=utf-8"

const PROBLEM_TYPE = "application/problem+json; charset=utf-8"

/** The media type of a document's 200 (docs/api.md, "Routes"). */
const documentType = (target: Extract<Target, { kind: "document" }>): string | undefined =>
  target.name === "openapi"
    ? JSON_TYPE
    : target.name === "docs"
      ? "text/html; charset=utf-8"
      : DOCS_FILES[target.asset ?? ""]

/** The codes an answer may carry before any operation is known: those of the checks up to the route's. */
const ROUTE_CODES: ReadonlyArray<ProblemCode> = PIPELINE.slice(
  0,
  PIPELINE.findIndex((check) => check.id === "route") + 1
).flatMap((check): ReadonlyArray<ProblemCode> => check.codes)

/** The problem codes the contract declares for what the request names: its operation's, else the route's. */
const declaredCodes = (judged: Judged): ReadonlyArray<ProblemCode> =>
  judged.operation === undefined ? ROUTE_CODES : problemCodesOf(judged.operation)

/** Where a success body's values break the format their Schema annotates (`date-time`: the contract's one form). */
const formatProblems = (ast: SchemaAST.AST, value: unknown, pointer: string): ReadonlyArray<string> => {
  if (ast.annotations?.["format"] === "date-time")
    return typeof value === "string" && TIMESTAMP_PATTERN.test(value) ? [] : [`${pointer}: not a timestamp`]
  if (SchemaAST.isObjects(ast) && isRecord(value))
    return ast.propertySignatures.flatMap((field) =>
      formatProblems(field.type, value[String(field.name)], `${pointer}/${String(field.name)}`)
    )
  const items = SchemaAST.isArrays(ast) ? ast.rest[0] : undefined
  if (items !== undefined && Array.isArray(value))
    return value.flatMap((item: unknown, index) => formatProblems(items, item, `${pointer}/${index}`))
  return []
}

/**
 * A success body: a value of the operation's success Schema (no other key), written as the Schema writes it (its keys
 * in order), its timestamps in the contract's one form, and what the operation's model says of it.
 */
const successProblems = (judged: Judged, operation: ContractOperation, text: string): ReadonlyArray<string> => {
  const label = operation.operationId
  const { schema } = operation.success
  if (schema === undefined) return text === "" ? [] : [`${label}: a body on a 204`]
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return [`${label}: the success body is not JSON`]
  }
  const codec = successCodecOf(schema)
  const decoded = codec.decode(value)
  if (Exit.isFailure(decoded)) return [`${label}: the success body is not what its Schema says`]
  const problems: Array<string> = []
  if (JSON.stringify(codec.encode(decoded.value)) !== text)
    problems.push(`${label}: the success body is not written as its Schema writes it`)
  problems.push(...formatProblems(schema.ast, value, label))
  problems.push(...declaredSuccess(judged, value))
  return problems
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
  if (
    typeof code !== "string" ||
    !Object.hasOwn(PROBLEM_CODE_STATUS, code) ||
    PROBLEM_CODE_STATUS[code as ProblemCode] !== status
  )
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
          if (!(FIELD_ISSUE_CODES as ReadonlyArray<unknown>).includes(entry["code"]))
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

const describeOutcomes = (outcomes: ReadonlyArray<Outcome>): string =>
  outcomes.map(({ status, code }) => (code === undefined ? String(status) : `${status} ${code}`)).join(", ")

/**
 * Everything the contract says about one response to a judged case, as a list of violations (empty: conforming): the
 * status (and code) among the outcomes `judgeCase` allows, a code the contract declares for what the request names,
 * the common headers and the request id, `Allow` and the challenges, the problem shape, the success body, and that
 * no secret of the request and nothing internal shows in the body.
 */
export const checkJudged = (judged: Judged, response: RawResponse): ReadonlyArray<string> => {
  const { fuzz, target, operation } = judged
  const problems: Array<string> = []
  const { status, headers } = response
  const text = response.body.toString("utf8")
  const bodyless = fuzz.method === "HEAD" || status === 204
  const body = status >= 400 && !bodyless ? parseBody(response) : undefined
  const code = isRecord(body) ? body["code"] : undefined
  const allowed = judged.outcomes.filter((outcome) => outcome.status === status)
  if (allowed.length === 0) problems.push(`status ${status}, expected ${describeOutcomes(judged.outcomes)}`)
  else if (
    typeof code === "string" &&
    allowed.every((outcome) => outcome.code !== undefined) &&
    !allowed.some((outcome) => outcome.code === code)
  )
    problems.push(`code ${code}, expected ${describeOutcomes(allowed)}`)
  if (typeof code === "string" && !(declaredCodes(judged) as ReadonlyArray<string>).includes(code))
    problems.push(`code ${code}, which the contract does not declare for ${operation?.operationId ?? fuzz.path}`)
  if (status >= 500 && allowed.length === 0) problems.push(`a ${status}`)
  const docsFile = status === 200 && target.kind === "document" && target.name !== "openapi"
  // The docs page and its files, whose URLs carry no version, are revalidated rather than not stored (docs/api.md,
  // "Headers on every response"); every other response is `no-store`.
  const cacheControl = docsFile ? "no-cache" : "no-store"
  if (headers["cache-control"] !== cacheControl) problems.push(`Cache-Control ${String(headers["cache-control"])}`)
  if (headers["x-content-type-options"] !== "nosniff") problems.push("X-Content-Type-Options missing")
  const sentId = fuzz.requestId?.replace(/^[ \t]+|[ \t]+$/g, "")
  const receivedId = headers["x-request-id"] ?? ""
  if (!REQUEST_ID_PATTERN.test(receivedId)) problems.push(`X-Request-Id ${JSON.stringify(receivedId)}`)
  else if (sentId !== undefined && REQUEST_ID_PATTERN.test(sentId) !== (receivedId === sentId))
    problems.push(`X-Request-Id ${receivedId} for ${JSON.stringify(sentId)}`)
  if (bodyless && response.body.length > 0) problems.push("a body on HEAD or 204")
  // OPTIONS's 204 and a 405 name the path's methods; an operation's own 204 (No Content) does not.
  if (status === 405 || (status === 204 && fuzz.method === "OPTIONS")) {
    const allow = target.kind === "route" ? target.route.allow : target.kind === "document" ? DOCUMENT_ALLOW : undefined
    if (allow !== undefined && headers["allow"] !== allow)
      problems.push(`Allow ${String(headers["allow"])}, expected ${allow}`)
  }
  if (status === 204) {
    if (headers["content-type"] !== undefined) problems.push("a Content-Type on 204")
  } else if (status >= 400) {
    if (headers["content-type"] !== PROBLEM_TYPE)
      problems.push(`Content-Type ${String(headers["content-type"])} on an error`)
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
    if (!bodyless) problems.push(...problemProblems(status, body))
  } else {
    const contentType = target.kind === "document" ? documentType(target) : JSON_TYPE
    if (headers["content-type"] !== contentType)
      problems.push(`Content-Type ${String(headers["content-type"])} on a success`)
    if (!bodyless && operation !== undefined) problems.push(...successProblems(judged, operation, text))
    if (!bodyless && target.kind === "document" && target.name === "openapi") {
      const document = parseBody(response)
      if (!isRecord(document) || !String(document["openapi"]).startsWith("3.1"))
        problems.push("openapi.json: not an OpenAPI 3.1 document")
    }
  }
  for (const secret of fuzz.secrets) {
    if (
      [...secret].length >= 8 &&
      !/^\**$/.test(secret) &&
      (text.includes(secret) || text.includes(JSON.stringify(secret).slice(1, -1)))
    ) {
      problems.push("the response contains a secret of the request (a password)")
    }
  }
  const internal = INTERNALS.exec(text)
  if (internal !== null && !requestText(fuzz).includes(internal[0]))
    problems.push(`internal detail in the body: ${JSON.stringify(internal[0])}`)
  return problems
}

/** `checkJudged` for a case not judged yet. */
export const checkResponse = (fixture: FuzzFixture, fuzz: FuzzCase, response: RawResponse): ReadonlyArray<string> =>
  checkJudged(judgeCase(fixture, fuzz), response)

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

/** Violations of one result: a wire case must get the parse-error problem, anything else `checkJudged`. */
export const checkResult = (judged: Judged, result: FuzzResult): ReadonlyArray<string> => {
  if (result.kind === "error") return [`no response: ${result.message}`]
  if (result.kind === "wire") return wireProblems(result)
  if (isWireMethod(judged.fuzz.method)) return ["a wire case answered over HTTP"]
  return checkJudged(judged, result.response)
}
