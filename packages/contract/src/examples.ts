import type { BodySpec } from "./operation.js"
import type { OperationId, Operations } from "./operations.js"
import { REASON_PHRASES, type ProblemCode, type ProblemSchema } from "./problem.js"
import { PROBLEM_DETAILS as DETAILS } from "./problem-details.js"

/**
 * The examples of the OpenAPI document's responses, as data: what a server answers, byte for byte once serialised, in
 * the situations docs/api.md and its curl lines describe (user `u_1`, payment methods `pm_1`, `pm_2`). Typed by the
 * contract's Schemas, so a renamed field fails to compile; core's openapi-examples.test.ts sends the matching request
 * to the handler and compares every problem example with the body it answers.
 */

/** A problem body, in the key order the server writes (`problemBody` in core). */
export type ProblemExample = (typeof ProblemSchema)["Encoded"] & { readonly code: ProblemCode }

/** The body of each operation's success answer (wire form: timestamps as strings). */
export const SUCCESS_EXAMPLES: {
  readonly [K in OperationId]: Operations[K]["success"]["schema"]["Encoded"]
} = {
  createPublicPlanEntry: { email: "ada@example.com", password: "********" },
  getLanguagePreferences: {
    id: 1,
    language: "en",
    timezone: 0,
    mfa_enabled: false,
    created_at: "2026-11-21T10:00:00.000Z",
    updated_at: "2026-11-21T10:00:00.000Z"
  },
  updateLanguagePreferences: {
    id: 1,
    language: "pt-BR",
    timezone: -180,
    mfa_enabled: true,
    created_at: "2026-11-21T10:00:00.000Z",
    updated_at: "2026-11-21T10:05:00.000Z"
  },
  listPaymentMethods: {
    data: [
      { id: "pm_1", is_default: false, created_at: "2026-11-21T10:00:00.000Z", updated_at: "2026-11-21T10:05:00.000Z" },
      { id: "pm_2", is_default: true, created_at: "2026-11-21T10:00:00.000Z", updated_at: "2026-11-21T10:05:00.000Z" }
    ]
  },
  setDefaultPaymentMethod: {
    id: "pm_2",
    is_default: true,
    created_at: "2026-11-21T10:00:00.000Z",
    updated_at: "2026-11-21T10:05:00.000Z"
  },
  health: { status: "ok" },
  liveness: { status: "ok" },
  readiness: { status: "ok" }
}

/** A problem body as `problemBody` in core writes it: the title is the status's reason phrase. */
const problem = <C extends ProblemCode>(status: number, detail: string, code: C) =>
  ({ type: "about:blank", title: REASON_PHRASES[status] ?? "Error", status, detail, code }) as const

/**
 * One problem body per code but `validation_failed`, whose field errors depend on the operation
 * (`VALIDATION_EXAMPLES`). Where the detail depends on the request or the configuration, the example is the
 * default configuration's answer (a 16 KiB body limit, a 2048-character path, the store's `Retry-After: 1`).
 */
export const PROBLEM_EXAMPLES: { readonly [C in Exclude<ProblemCode, "validation_failed">]: ProblemExample } = {
  invalid_json: problem(400, DETAILS.bodyRequired, "invalid_json"),
  invalid_body: problem(400, DETAILS.invalidBody, "invalid_body"),
  unauthenticated: problem(401, DETAILS.unauthenticated, "unauthenticated"),
  invalid_token: problem(401, DETAILS.invalidToken, "invalid_token"),
  insufficient_scope: problem(403, DETAILS.insufficientScope, "insufficient_scope"),
  not_found: problem(404, DETAILS.notFound, "not_found"),
  method_not_allowed: problem(405, DETAILS.methodNotAllowed, "method_not_allowed"),
  payload_too_large: problem(413, DETAILS.payloadTooLarge(16_384), "payload_too_large"),
  unsupported_media_type: problem(415, DETAILS.unsupportedMediaType, "unsupported_media_type"),
  not_implemented: problem(501, DETAILS.transferCodingNotImplemented("gzip"), "not_implemented"),
  rate_limited: problem(429, DETAILS.rateLimited, "rate_limited"),
  precondition_failed: problem(412, DETAILS.preconditionFailed, "precondition_failed"),
  precondition_required: problem(428, DETAILS.preconditionRequired, "precondition_required"),
  uri_too_long: problem(414, DETAILS.uriTooLong(2048), "uri_too_long"),
  unavailable: problem(503, DETAILS.unavailable, "unavailable"),
  internal: problem(500, DETAILS.internal, "internal"),
  bad_request: problem(400, DETAILS.badRequest, "bad_request"),
  request_timeout: problem(408, DETAILS.requestTimeout, "request_timeout"),
  headers_too_large: problem(431, DETAILS.headersTooLarge, "headers_too_large"),
  expectation_failed: problem(417, DETAILS.expectationFailed, "expectation_failed")
}

/** The operations that read a JSON body. */
export type BodyOperationId = {
  readonly [K in OperationId]: Operations[K]["body"] extends BodySpec ? K : never
}[OperationId]

/** A 400 `validation_failed` per operation that reads a body, with the request that gets it (`VALIDATION_REQUESTS`). */
export const VALIDATION_EXAMPLES: { readonly [K in BodyOperationId]: ProblemExample } = {
  createPublicPlanEntry: {
    ...problem(400, DETAILS.fieldsInvalid, "validation_failed"),
    errors: [
      { pointer: "/email", code: "invalid_format", detail: "must be a plain email address (local@domain.tld)" },
      { pointer: "/password", code: "too_short", detail: "must be at least 8 characters" }
    ]
  },
  updateLanguagePreferences: {
    ...problem(400, DETAILS.fieldsInvalid, "validation_failed"),
    errors: [
      { pointer: "/language", code: "invalid_format", detail: "must be a BCP 47 language tag such as en-US" },
      { pointer: "/timezone", code: "invalid_format", detail: "must be a multiple of 15" }
    ]
  },
  setDefaultPaymentMethod: {
    ...problem(400, DETAILS.fieldsInvalid, "validation_failed"),
    errors: [{ pointer: "/is_default", code: "not_allowed", detail: "may only be true" }]
  }
}

/** The bodies that get `VALIDATION_EXAMPLES` (a test sends each). */
export const VALIDATION_REQUESTS: { readonly [K in BodyOperationId]: unknown } = {
  createPublicPlanEntry: { email: "ada@example", password: "short" },
  updateLanguagePreferences: { language: "en_US", timezone: 50 },
  setDefaultPaymentMethod: { is_default: false }
}
