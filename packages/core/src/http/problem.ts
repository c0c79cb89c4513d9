import type { DomainError } from "../domain/errors.js"
import type { FieldIssue } from "../domain/field-issue.js"
import type { Access, DomainErrorTag, Operation } from "./routes.js"

/**
 * Every stable problem code with the one status it is answered with (docs/api.md, "Errors"): the one list that the
 * ProblemCode type, the OpenAPI enum and the suites' expectations derive from.
 */
export const PROBLEM_CODE_STATUS = {
  invalid_json: 400,
  invalid_body: 400,
  validation_failed: 400,
  unauthenticated: 401,
  invalid_token: 401,
  insufficient_scope: 403,
  not_found: 404,
  method_not_allowed: 405,
  payload_too_large: 413,
  unsupported_media_type: 415,
  not_implemented: 501,
  rate_limited: 429,
  uri_too_long: 414,
  unavailable: 503,
  internal: 500,
  // Refusals Node makes before a request exists (answered by @accord/node).
  bad_request: 400,
  request_timeout: 408,
  headers_too_large: 431,
  expectation_failed: 417
} as const

export type ProblemCode = keyof typeof PROBLEM_CODE_STATUS

export const PROBLEM_CODES = Object.keys(PROBLEM_CODE_STATUS) as ReadonlyArray<ProblemCode>

/** The status each domain error is answered with: the one place a domain error meets HTTP (see problemOf). */
export const DOMAIN_ERROR_STATUS = {
  ValidationError: 400,
  NotFound: 404,
  Unauthenticated: 401,
  InsufficientScope: 403,
  Unavailable: 503
} as const satisfies Record<DomainError["_tag"], number>

/** RFC 9110 reason phrases for every status Accord answers with. */
export const REASON_PHRASES: Readonly<Record<number, string>> = {
  200: "OK",
  201: "Created",
  204: "No Content",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  417: "Expectation Failed",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable"
}

export interface Problem {
  readonly status: number
  readonly code: ProblemCode
  readonly detail: string
  readonly errors?: ReadonlyArray<FieldIssue>
  /** Headers the problem needs besides the common ones (WWW-Authenticate, Allow, Retry-After). */
  readonly headers?: Readonly<Record<string, string>>
}

const REALM = 'Bearer realm="api"'

export const problems = {
  invalidJson: (detail: string): Problem => ({ status: 400, code: "invalid_json", detail }),
  bodyRequired: (): Problem => ({ status: 400, code: "invalid_json", detail: "A JSON body is required." }),
  invalidBody: (): Problem => ({ status: 400, code: "invalid_body", detail: "The body must be a JSON object." }),
  notFound: (): Problem => ({ status: 404, code: "not_found", detail: "No resource exists at this address." }),
  methodNotAllowed: (allow: string): Problem => ({
    status: 405,
    code: "method_not_allowed",
    detail: "This method is not allowed here; see the Allow header.",
    headers: { allow }
  }),
  payloadTooLarge: (limit: number): Problem => ({
    status: 413,
    code: "payload_too_large",
    detail: `The body is larger than ${limit} bytes.`
  }),
  transferCodingNotImplemented: (coding: string): Problem => ({
    status: 501,
    code: "not_implemented",
    detail: `The transfer coding ${JSON.stringify(coding)} is not implemented; send the body as it is, or chunked.`
  }),
  unsupportedMediaType: (): Problem => ({
    status: 415,
    code: "unsupported_media_type",
    detail: "The body must be sent as application/json (UTF-8)."
  }),
  uriTooLong: (max: number): Problem => ({
    status: 414,
    code: "uri_too_long",
    detail: `The path is longer than ${max} characters.`
  }),
  rateLimited: (retryAfterSeconds: number): Problem => ({
    status: 429,
    code: "rate_limited",
    detail: "Too many requests with this credential; retry later.",
    headers: { "retry-after": String(retryAfterSeconds) }
  }),
  internal: (): Problem => ({ status: 500, code: "internal", detail: "An unexpected error occurred." }),
  /** The readiness probe while the host drains: `unavailable`, as it is for the store, with a detail of its own. */
  draining: (): Problem => ({
    status: 503,
    code: "unavailable",
    detail: "The service is shutting down and takes no new requests; retry later.",
    headers: { "retry-after": "1" }
  }),
  // Refusals Node makes before a request exists (answered by @accord/node answerClientError).
  badRequest: (): Problem => ({ status: 400, code: "bad_request", detail: "The request is not valid HTTP/1.1." }),
  requestTimeout: (): Problem => ({
    status: 408,
    code: "request_timeout",
    detail: "The request did not arrive completely in time."
  }),
  headersTooLarge: (): Problem => ({
    status: 431,
    code: "headers_too_large",
    detail: "The request line and headers are larger than the server accepts."
  }),
  expectationFailed: (): Problem => ({
    status: 417,
    code: "expectation_failed",
    detail: "The server meets no expectation but 100-continue."
  }),
  chunkExtensionsTooLarge: (): Problem => ({
    status: 413,
    code: "payload_too_large",
    detail: "The chunk extensions of the body are larger than the server accepts."
  })
} as const

export const PROBLEM_CONTENT_TYPE = "application/problem+json; charset=utf-8"

/** Maps a domain error to its problem. The one place where a domain error gets an HTTP status. */
export const problemOf = (error: DomainError): Problem => {
  switch (error._tag) {
    case "ValidationError":
      return { status: 400, code: "validation_failed", detail: "Some fields are invalid.", errors: error.issues }
    case "NotFound":
      return problems.notFound()
    case "Unauthenticated":
      return error.reason === "missing"
        ? {
            status: 401,
            code: "unauthenticated",
            detail: "Send a credential: Authorization: Bearer <token>.",
            headers: { "www-authenticate": REALM }
          }
        : {
            status: 401,
            code: "invalid_token",
            detail: "The credential is malformed, unknown or expired.",
            headers: { "www-authenticate": `${REALM}, error="invalid_token"` }
          }
    case "InsufficientScope":
      return {
        status: 403,
        code: "insufficient_scope",
        detail: "This credential may not use this operation.",
        headers: { "www-authenticate": `${REALM}, error="insufficient_scope"` }
      }
    case "Unavailable":
      return {
        status: 503,
        code: "unavailable",
        detail: "The service cannot answer right now; retry later.",
        headers: { "retry-after": String(error.retryAfterSeconds) }
      }
  }
}

/** The problem+json body: exactly type, title, status, detail, code, and errors only for field problems. */
export const problemBody = (problem: Problem): string =>
  JSON.stringify({
    type: "about:blank",
    title: REASON_PHRASES[problem.status] ?? "Error",
    status: problem.status,
    detail: problem.detail,
    code: problem.code,
    ...(problem.errors !== undefined && {
      errors: problem.errors.map(({ pointer, code, detail }) => ({ pointer, code, detail }))
    })
  })

/** A problem code whose status is `Status`. */
type CodeWithStatus<Status extends number> = {
  readonly [C in ProblemCode]: (typeof PROBLEM_CODE_STATUS)[C] extends Status ? C : never
}[ProblemCode]

/**
 * The problem codes each domain error is answered with (see problemOf): `Unauthenticated` is `unauthenticated` for a
 * missing credential and `invalid_token` for one that is not accepted. Each code has its error's DOMAIN_ERROR_STATUS.
 */
export const DOMAIN_ERROR_CODES = {
  ValidationError: ["validation_failed"],
  NotFound: ["not_found"],
  Unauthenticated: ["unauthenticated", "invalid_token"],
  InsufficientScope: ["insufficient_scope"],
  Unavailable: ["unavailable"]
} as const satisfies {
  readonly [Tag in DomainErrorTag]: ReadonlyArray<CodeWithStatus<(typeof DOMAIN_ERROR_STATUS)[Tag]>>
}

/**
 * The codes an operation can be answered with, by what it has (docs/api.md, "Errors": the order of checks). Every
 * operation: refusals before a request is read (408, 414, 431, and 400 `bad_request` for bytes that are not HTTP)
 * and 500 `internal`.
 */
const EVERY_OPERATION_CODES = [
  "bad_request",
  "request_timeout",
  "uri_too_long",
  "headers_too_large",
  "internal"
] as const satisfies ReadonlyArray<ProblemCode>
/** A credentialed operation: no or a refused credential (401), over the credential's rate limit (429). */
const CREDENTIAL_CODES = [
  "unauthenticated",
  "invalid_token",
  "rate_limited"
] as const satisfies ReadonlyArray<ProblemCode>
/** A user operation called with an application credential (403). */
const USER_CODES = ["insufficient_scope"] as const satisfies ReadonlyArray<ProblemCode>
/**
 * An operation that reads a body: a transfer coding other than chunked (501), its media type (415), size (413), JSON
 * syntax, shape and fields (400).
 */
const BODY_CODES = [
  "not_implemented",
  "unsupported_media_type",
  "payload_too_large",
  "invalid_json",
  "invalid_body",
  "validation_failed"
] as const satisfies ReadonlyArray<ProblemCode>
/** An operation with path parameters: a value their Schema refuses (404). */
const PARAMS_CODES = ["not_found"] as const satisfies ReadonlyArray<ProblemCode>

/** What decides an operation's problem codes: a typed operation gives its exact union, the erased view every code it may have. */
export interface ProblemCodeSource {
  readonly access: Access
  readonly body: unknown
  readonly params: unknown
  readonly errors: ReadonlyArray<DomainErrorTag>
}

/**
 * The problem codes an operation can be answered with, at the type level: the same rules as `problemCodesOf`, from
 * the operation's access, whether it has a body and path parameters, and its declared domain errors.
 */
export type ProblemCodeOf<O extends ProblemCodeSource> =
  | (typeof EVERY_OPERATION_CODES)[number]
  | (O["access"] extends "public" ? never : (typeof CREDENTIAL_CODES)[number])
  | ("user" extends O["access"] ? (typeof USER_CODES)[number] : never)
  | ([O["body"]] extends [undefined] ? never : (typeof BODY_CODES)[number])
  | ([O["params"]] extends [undefined] ? never : (typeof PARAMS_CODES)[number])
  | (typeof DOMAIN_ERROR_CODES)[O["errors"][number]][number]

/**
 * The problem codes an operation can be answered with, at run time, in PROBLEM_CODES order: the one derivation of
 * them, which `errorStatusesOf` (the OpenAPI document) and `@accord/client` (the codes it decodes) both read.
 */
export const problemCodesOf = <O extends Operation>(operation: O): ReadonlyArray<ProblemCodeOf<O>> => {
  const codes = new Set<ProblemCode>(EVERY_OPERATION_CODES)
  const add = (more: ReadonlyArray<ProblemCode>) => {
    for (const code of more) codes.add(code)
  }
  if (operation.access !== "public") add(CREDENTIAL_CODES)
  if (operation.access === "user") add(USER_CODES)
  if (operation.body !== undefined) add(BODY_CODES)
  if (operation.params !== undefined) add(PARAMS_CODES)
  for (const tag of operation.errors) add(DOMAIN_ERROR_CODES[tag])
  // The checks above are the ones ProblemCodeOf makes on the type, so every code kept is in O's union.
  return PROBLEM_CODES.filter((code) => codes.has(code)) as ReadonlyArray<ProblemCodeOf<O>>
}

/**
 * Codes the OpenAPI document does not list per operation: 500 `internal` is a defect, not part of any operation's
 * contract; 400 `bad_request` answers bytes that are not HTTP, before any operation could be told apart.
 */
const UNLISTED_CODES: ReadonlySet<ProblemCode> = new Set<ProblemCode>(["bad_request", "internal"])

/**
 * Every error status an operation can answer, derived from its problem codes (`problemCodesOf`): what the OpenAPI
 * document lists for it.
 */
export const errorStatusesOf = (operation: Operation): ReadonlyArray<number> => {
  const statuses = new Set<number>()
  for (const code of problemCodesOf(operation)) {
    if (!UNLISTED_CODES.has(code)) statuses.add(PROBLEM_CODE_STATUS[code])
  }
  return [...statuses].sort((a, b) => a - b)
}
