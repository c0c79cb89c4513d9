import { Schema } from "effect"
import { FIELD_ISSUE_CODES } from "./fields/field-issue.js"
import { WireInt } from "./fields/wire-int.js"

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
  // Conditional requests (docs/api.md, "Conditional requests"): an If-Match that does not match, a PUT without one.
  precondition_failed: 412,
  precondition_required: 428,
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

/** RFC 9110 reason phrases for every status Accord answers with: a problem's `title`. */
export const REASON_PHRASES: Readonly<Record<number, string>> = {
  200: "OK",
  201: "Created",
  204: "No Content",
  304: "Not Modified",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  408: "Request Timeout",
  412: "Precondition Failed",
  413: "Content Too Large",
  414: "URI Too Long",
  415: "Unsupported Media Type",
  417: "Expectation Failed",
  428: "Precondition Required",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large",
  500: "Internal Server Error",
  501: "Not Implemented",
  503: "Service Unavailable"
}

export const PROBLEM_CONTENT_TYPE = "application/problem+json; charset=utf-8"

const FieldProblem = Schema.Struct({
  pointer: Schema.String.annotate({ description: "JSON pointer to the field, e.g. /email" }),
  code: Schema.Literals(FIELD_ISSUE_CODES),
  detail: Schema.String
}).annotate({ identifier: "FieldProblem" })

/** The problem+json body every error carries (RFC 9457), as docs/api.md ("Errors") fixes it. */
export const ProblemSchema = Schema.Struct({
  type: Schema.Literal("about:blank"),
  title: Schema.String,
  status: WireInt,
  detail: Schema.String,
  code: Schema.Literals(PROBLEM_CODES).annotate({
    description:
      "Stable machine-readable code (bad_request, request_timeout and headers_too_large: refused before the request was read)"
  }),
  errors: Schema.optionalKey(Schema.Array(FieldProblem))
}).annotate({ identifier: "Problem" })
