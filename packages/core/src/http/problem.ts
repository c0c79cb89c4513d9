import type { DomainError } from "../domain/errors.js"
import type { FieldIssue } from "../domain/field-issue.js"
import type { Operation } from "./routes.js"

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
  rate_limited: 429,
  uri_too_long: 414,
  unavailable: 503,
  internal: 500,
  // Refusals Node makes before a request exists (answered by @accord/node).
  bad_request: 400,
  request_timeout: 408,
  headers_too_large: 431
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
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
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

/**
 * Every error status an operation can answer, derived from its shape (docs/api.md, "Errors": order of checks) and the domain
 * errors it declares: what the OpenAPI document lists for it.
 */
export const errorStatusesOf = (operation: Operation): ReadonlyArray<number> => {
  // Before a request is read: it took too long to arrive (408), its path (414) or its headers (431) are too long.
  const statuses = new Set<number>([408, 414, 431])
  if (operation.access !== "public") for (const status of [401, 429]) statuses.add(status)
  if (operation.access === "user") statuses.add(403)
  if (operation.body !== undefined) for (const status of [400, 413, 415]) statuses.add(status)
  if (operation.params !== undefined) statuses.add(404)
  for (const tag of operation.errors) statuses.add(DOMAIN_ERROR_STATUS[tag])
  return [...statuses].sort((a, b) => a - b)
}
