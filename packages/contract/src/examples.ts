import type { ValidationExample } from "./operation.js"
import { PROBLEMS, REASON_PHRASES, type ProblemCode, type ProblemSchema } from "./problems.js"

/**
 * The problem examples of the OpenAPI document: what a server answers, byte for byte once serialised, in the
 * situations docs/api.md and its curl lines describe. Core's openapi-examples.test.ts sends the matching request to
 * the handler and compares every example with the body it answers. The operations' own examples (success bodies,
 * requests, validation failures) are in their areas' `docs` (operations/*.ts).
 */

/** A problem body, in the key order the server writes (`problemBody` in core). */
export type ProblemExample = (typeof ProblemSchema)["Encoded"] & { readonly code: ProblemCode }

/** A problem body as `problemBody` in core writes it: the title is the status's reason phrase. */
const problem = <C extends ProblemCode>(code: C, detail: string) => {
  const status = PROBLEMS[code].status
  return { type: "about:blank", title: REASON_PHRASES[status] ?? "Error", status, detail, code } as const
}

/**
 * One problem body per code but `validation_failed`, whose field errors depend on the operation
 * (`validationProblemExample`). Where the detail depends on the request or the configuration, the example is the
 * default configuration's answer (a 16 KiB body limit, a 2048-character path, the store's `Retry-After: 1`).
 */
export const PROBLEM_EXAMPLES: { readonly [C in Exclude<ProblemCode, "validation_failed">]: ProblemExample } = {
  invalid_json: problem("invalid_json", PROBLEMS.invalid_json.detail.bodyRequired),
  invalid_body: problem("invalid_body", PROBLEMS.invalid_body.detail),
  invalid_query: problem("invalid_query", PROBLEMS.invalid_query.detail),
  invalid_cursor: problem("invalid_cursor", PROBLEMS.invalid_cursor.detail),
  unauthenticated: problem("unauthenticated", PROBLEMS.unauthenticated.detail),
  invalid_token: problem("invalid_token", PROBLEMS.invalid_token.detail),
  insufficient_scope: problem("insufficient_scope", PROBLEMS.insufficient_scope.detail),
  not_found: problem("not_found", PROBLEMS.not_found.detail),
  method_not_allowed: problem("method_not_allowed", PROBLEMS.method_not_allowed.detail),
  payload_too_large: problem("payload_too_large", PROBLEMS.payload_too_large.detail.overLimit(16_384)),
  unsupported_media_type: problem("unsupported_media_type", PROBLEMS.unsupported_media_type.detail),
  not_implemented: problem("not_implemented", PROBLEMS.not_implemented.detail.transferCoding("gzip")),
  rate_limited: problem("rate_limited", PROBLEMS.rate_limited.detail),
  precondition_failed: problem("precondition_failed", PROBLEMS.precondition_failed.detail),
  precondition_required: problem("precondition_required", PROBLEMS.precondition_required.detail),
  uri_too_long: problem("uri_too_long", PROBLEMS.uri_too_long.detail.overLimit(2048)),
  unavailable: problem("unavailable", PROBLEMS.unavailable.detail.retryLater),
  internal: problem("internal", PROBLEMS.internal.detail),
  bad_request: problem("bad_request", PROBLEMS.bad_request.detail),
  request_timeout: problem("request_timeout", PROBLEMS.request_timeout.detail),
  headers_too_large: problem("headers_too_large", PROBLEMS.headers_too_large.detail),
  expectation_failed: problem("expectation_failed", PROBLEMS.expectation_failed.detail)
}

/** The 400 `validation_failed` an operation's `validationExample` gets. */
export const validationProblemExample = (example: ValidationExample): ProblemExample => ({
  ...problem("validation_failed", PROBLEMS.validation_failed.detail.fieldsInvalid),
  errors: example.errors
})
