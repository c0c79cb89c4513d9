import { DOMAIN_ERROR_STATUS, REASON_PHRASES, type FieldIssue, type ProblemCode } from "@accord/contract"
import type { DomainError } from "../domain/errors.js"

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
  preconditionFailed: (): Problem => ({
    status: 412,
    code: "precondition_failed",
    detail: "The resource has changed since the If-Match entity tag was read; read it again."
  }),
  preconditionRequired: (): Problem => ({
    status: 428,
    code: "precondition_required",
    detail: "This server requires If-Match with the entity tag of the version read (from its ETag)."
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

/**
 * The most field issues a problem lists: every unknown field is an issue, so an uncapped list made a 13.9 KB body of
 * 1,500 unknown fields a 113 KB answer (docs/SECURITY.md, item 26). The shape stays the contract's; `detail` says
 * how many there were (docs/api.md, "Precise rules").
 */
export const MAX_LISTED_FIELD_ISSUES = 20

const validationProblem = (status: number, issues: ReadonlyArray<FieldIssue>): Problem =>
  issues.length <= MAX_LISTED_FIELD_ISSUES
    ? { status, code: "validation_failed", detail: "Some fields are invalid.", errors: issues }
    : {
        status,
        code: "validation_failed",
        detail: `${issues.length} fields are invalid; the first ${MAX_LISTED_FIELD_ISSUES} by pointer are listed.`,
        errors: issues.slice(0, MAX_LISTED_FIELD_ISSUES)
      }

/**
 * Maps a domain error to its problem: the status the contract declares for its tag (DOMAIN_ERROR_STATUS), one of the
 * codes it declares (DOMAIN_ERROR_CODES), and the detail and headers the error's fields decide.
 */
export const problemOf = (error: DomainError): Problem => {
  const status = DOMAIN_ERROR_STATUS[error._tag]
  switch (error._tag) {
    case "ValidationError":
      return validationProblem(status, error.issues)
    case "NotFound":
      return problems.notFound()
    case "Unauthenticated":
      return error.reason === "missing"
        ? {
            status,
            code: "unauthenticated",
            detail: "Send a credential: Authorization: Bearer <token>.",
            headers: { "www-authenticate": REALM }
          }
        : {
            status,
            code: "invalid_token",
            detail: "The credential is malformed, unknown or expired.",
            headers: { "www-authenticate": `${REALM}, error="invalid_token"` }
          }
    case "InsufficientScope":
      return {
        status,
        code: "insufficient_scope",
        detail: "This credential may not use this operation.",
        headers: { "www-authenticate": `${REALM}, error="insufficient_scope"` }
      }
    case "PreconditionFailed":
      return problems.preconditionFailed()
    case "Unavailable":
      return {
        status,
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
