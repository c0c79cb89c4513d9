import { PROBLEMS, REASON_PHRASES, type FixedDetailCode, type ProblemCode } from "@accord/contract"
import type { DomainError, FieldIssue } from "@accord/domain"

/** A problem in the making: its code, the status the contract gives that code, and its detail. */
export interface Problem {
  readonly status: number
  readonly code: ProblemCode
  readonly detail: string
  readonly errors?: ReadonlyArray<FieldIssue>
  /** Headers the problem needs besides the common ones (WWW-Authenticate, Allow, Retry-After). */
  readonly headers?: Readonly<Record<string, string>>
}

type Headers = Readonly<Record<string, string>>

/**
 * A problem made from its code (docs/api.md, "Errors"): the status is the one the contract's table gives the code,
 * looked up here once; the detail is one of the code's texts in that table (required where the code has several).
 */
export function problem(code: FixedDetailCode, detail?: string, headers?: Headers): Problem
export function problem(code: ProblemCode, detail: string, headers?: Headers): Problem
export function problem(code: ProblemCode, detail?: string, headers?: Headers): Problem {
  const entry = PROBLEMS[code]
  const text = detail ?? (typeof entry.detail === "string" ? entry.detail : "")
  return headers === undefined
    ? { status: entry.status, code, detail: text }
    : { status: entry.status, code, detail: text, headers }
}

const REALM = 'Bearer realm="api"'

/**
 * The most field issues a problem lists: every unknown field is an issue, so an uncapped list made a 13.9 KB body of
 * 1,500 unknown fields a 113 KB answer (docs/SECURITY.md, item 26). The shape stays the contract's; `detail` says
 * how many there were (docs/api.md, "Precise rules").
 */
export const MAX_LISTED_FIELD_ISSUES = 20

const FIELDS = PROBLEMS.validation_failed.detail

const validationProblem = (issues: ReadonlyArray<FieldIssue>): Problem => {
  const listed = issues.length <= MAX_LISTED_FIELD_ISSUES ? issues : issues.slice(0, MAX_LISTED_FIELD_ISSUES)
  const detail =
    listed === issues ? FIELDS.fieldsInvalid : FIELDS.someFieldsListed(issues.length, MAX_LISTED_FIELD_ISSUES)
  return { ...problem("validation_failed", detail), errors: listed }
}

// A domain error's problems carry no request data, so those that need no field of the error are made once.
const NOT_FOUND = problem("not_found")
const MISSING_CREDENTIAL = problem("unauthenticated", undefined, { "www-authenticate": REALM })
const INVALID_TOKEN = problem("invalid_token", undefined, { "www-authenticate": `${REALM}, error="invalid_token"` })
const INSUFFICIENT_SCOPE = problem("insufficient_scope", undefined, {
  "www-authenticate": `${REALM}, error="insufficient_scope"`
})
const PRECONDITION_FAILED = problem("precondition_failed")
const UNKNOWN_CURSOR = problem("invalid_cursor")

/**
 * Maps a domain error to its problem: one of the codes the contract declares for its tag (`DOMAIN_ERRORS`), with the
 * detail and headers the error's fields decide.
 */
export const problemOf = (error: DomainError): Problem => {
  switch (error._tag) {
    case "ValidationError":
      return validationProblem(error.issues)
    case "NotFound":
      return NOT_FOUND
    case "Unauthenticated":
      return error.reason === "missing" ? MISSING_CREDENTIAL : INVALID_TOKEN
    case "InsufficientScope":
      return INSUFFICIENT_SCOPE
    case "PreconditionFailed":
      return PRECONDITION_FAILED
    case "UnknownCursor":
      return UNKNOWN_CURSOR
    case "Unavailable":
      return problem("unavailable", PROBLEMS.unavailable.detail.retryLater, {
        "retry-after": String(error.retryAfterSeconds)
      })
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
