import { problem, problemDocument } from "./domain-errors.js"
import type { ValidationExample } from "./operation.js"
import { PROBLEM_CODES, PROBLEMS, type FixedDetailCode, type ProblemCode, type ProblemSchema } from "./problems.js"

/**
 * The problem examples of the OpenAPI document: what a server answers, byte for byte once serialised, in the
 * situations docs/api.md and its curl lines describe. Core's openapi-examples.test.ts sends the matching request to
 * the handler and compares every example with the body it answers. The operations' own examples (success bodies,
 * requests, validation failures) are in their areas' `docs` (operations/*.ts).
 */

/** A problem body, in the key order the server writes (`problemDocument`). */
export type ProblemExample = (typeof ProblemSchema)["Encoded"] & { readonly code: ProblemCode }

/** The codes with several details (their situations differ): which one the example shows. */
type SeveralDetailsCode = Exclude<ProblemCode, FixedDetailCode | "validation_failed">

/**
 * The detail of each code that has several: where it depends on the request or the configuration, the default
 * configuration's answer (a 16 KiB body limit, a 2048-character path, the store's `Retry-After: 1`). A code with one
 * detail needs no entry.
 */
const EXAMPLE_DETAILS: { readonly [C in SeveralDetailsCode]: string } = {
  invalid_json: PROBLEMS.invalid_json.detail.bodyRequired,
  payload_too_large: PROBLEMS.payload_too_large.detail.overLimit(16_384),
  not_implemented: PROBLEMS.not_implemented.detail.transferCoding("gzip"),
  uri_too_long: PROBLEMS.uri_too_long.detail.overLimit(2048),
  gone: PROBLEMS.gone.detail.sunset("/api/payments/v1/payment-methods/pm_2/"),
  unavailable: PROBLEMS.unavailable.detail.retryLater
}

const hasSeveralDetails = (code: ProblemCode): code is SeveralDetailsCode => Object.hasOwn(EXAMPLE_DETAILS, code)

/** One problem body per code but `validation_failed`, whose field errors depend on the operation (`validationProblemExample`). */
export const PROBLEM_EXAMPLES = Object.fromEntries(
  PROBLEM_CODES.filter((code) => code !== "validation_failed").map((code) => [
    code,
    problemDocument(
      hasSeveralDetails(code) ? problem(code, EXAMPLE_DETAILS[code]) : problem(code as FixedDetailCode)
    ) as ProblemExample
  ])
) as { readonly [C in Exclude<ProblemCode, "validation_failed">]: ProblemExample }

/** The 400 `validation_failed` an operation's `validationExample` gets. */
export const validationProblemExample = (example: ValidationExample): ProblemExample => ({
  ...(problemDocument(problem("validation_failed", PROBLEMS.validation_failed.detail.fieldsInvalid)) as ProblemExample),
  errors: example.errors
})
