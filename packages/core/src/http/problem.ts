import {
  DOMAIN_ERROR_STATUS,
  PROBLEM_DETAILS as DETAILS,
  REASON_PHRASES,
  type FieldIssue,
  type ProblemCode
} from "@accord/contract"
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
  bodyRequired: (): Problem => ({ status: 400, code: "invalid_json", detail: DETAILS.bodyRequired }),
  invalidBody: (): Problem => ({ status: 400, code: "invalid_body", detail: DETAILS.invalidBody }),
  notFound: (): Problem => ({ status: 404, code: "not_found", detail: DETAILS.notFound }),
  methodNotAllowed: (allow: string): Problem => ({
    status: 405,
    code: "method_not_allowed",
    detail: DETAILS.methodNotAllowed,
    headers: { allow }
  }),
  payloadTooLarge: (limit: number): Problem => ({
    status: 413,
    code: "payload_too_large",
    detail: DETAILS.payloadTooLarge(limit)
  }),
  transferCodingNotImplemented: (coding: string): Problem => ({
    status: 501,
    code: "not_implemented",
    detail: DETAILS.transferCodingNotImplemented(coding)
  }),
  unsupportedMediaType: (): Problem => ({
    status: 415,
    code: "unsupported_media_type",
    detail: DETAILS.unsupportedMediaType
  }),
  uriTooLong: (max: number): Problem => ({
    status: 414,
    code: "uri_too_long",
    detail: DETAILS.uriTooLong(max)
  }),
  rateLimited: (retryAfterSeconds: number): Problem => ({
    status: 429,
    code: "rate_limited",
    detail: DETAILS.rateLimited,
    headers: { "retry-after": String(retryAfterSeconds) }
  }),
  preconditionFailed: (): Problem => ({
    status: 412,
    code: "precondition_failed",
    detail: DETAILS.preconditionFailed
  }),
  preconditionRequired: (): Problem => ({
    status: 428,
    code: "precondition_required",
    detail: DETAILS.preconditionRequired
  }),
  internal: (): Problem => ({ status: 500, code: "internal", detail: DETAILS.internal }),
  /** The readiness probe while the host drains: `unavailable`, as it is for the store, with a detail of its own. */
  draining: (): Problem => ({
    status: 503,
    code: "unavailable",
    detail: DETAILS.draining,
    headers: { "retry-after": "1" }
  }),
  // Refusals Node makes before a request exists (answered by @accord/node answerClientError).
  badRequest: (): Problem => ({ status: 400, code: "bad_request", detail: DETAILS.badRequest }),
  requestTimeout: (): Problem => ({
    status: 408,
    code: "request_timeout",
    detail: DETAILS.requestTimeout
  }),
  headersTooLarge: (): Problem => ({
    status: 431,
    code: "headers_too_large",
    detail: DETAILS.headersTooLarge
  }),
  expectationFailed: (): Problem => ({
    status: 417,
    code: "expectation_failed",
    detail: DETAILS.expectationFailed
  }),
  chunkExtensionsTooLarge: (): Problem => ({
    status: 413,
    code: "payload_too_large",
    detail: DETAILS.chunkExtensionsTooLarge
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
    ? { status, code: "validation_failed", detail: DETAILS.fieldsInvalid, errors: issues }
    : {
        status,
        code: "validation_failed",
        detail: DETAILS.someFieldsListed(issues.length, MAX_LISTED_FIELD_ISSUES),
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
            detail: DETAILS.unauthenticated,
            headers: { "www-authenticate": REALM }
          }
        : {
            status,
            code: "invalid_token",
            detail: DETAILS.invalidToken,
            headers: { "www-authenticate": `${REALM}, error="invalid_token"` }
          }
    case "InsufficientScope":
      return {
        status,
        code: "insufficient_scope",
        detail: DETAILS.insufficientScope,
        headers: { "www-authenticate": `${REALM}, error="insufficient_scope"` }
      }
    case "PreconditionFailed":
      return problems.preconditionFailed()
    case "Unavailable":
      return {
        status,
        code: "unavailable",
        detail: DETAILS.unavailable,
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
