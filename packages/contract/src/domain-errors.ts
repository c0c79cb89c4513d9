import type {
  DomainError,
  FieldIssue,
  InsufficientScope,
  NotFound,
  PreconditionFailed,
  Unauthenticated,
  Unavailable,
  UnknownCursor,
  ValidationError
} from "@accord/domain"
import { PROBLEMS, REASON_PHRASES, type FixedDetailCode, type ProblemCode } from "./problems.js"

// docs/api.md, "Errors": how each domain error is answered over HTTP, one entry per error (as effect's HttpApiError
// keeps an error with its status and rendering), while the domain's errors know nothing of HTTP. An entry gives the
// problem codes the error is answered with (each code's status and words are the problem table's, PROBLEMS, which the
// pipeline's checks share), the headers those answers carry as the OpenAPI document describes them, and the problem
// itself, header values included. What an operation may be answered (`problemCodesOf`), its OpenAPI responses, the
// handler's answer (`problemOf`) and the table in docs/api.md all read it; a domain error without its entry does not
// compile.

/** A response header some answers carry, as the OpenAPI document describes it. */
export interface AnswerHeader {
  readonly description: string
  readonly type: "string" | "integer"
}

/**
 * A problem in the making: its code, the status the problem table gives that code, its detail, the field issues of a
 * `validation_failed`, and the headers it needs besides the common ones (by lower-case name). `problemDocument` is its
 * body.
 */
export interface Problem<C extends ProblemCode = ProblemCode, H extends string = string> {
  readonly status: number
  readonly code: C
  readonly detail: string
  readonly errors?: ReadonlyArray<FieldIssue>
  readonly headers?: Readonly<Record<H, string>>
}

/**
 * A problem made from its code (docs/api.md, "Errors"): the status is the one the problem table gives the code, looked
 * up here once; the detail is one of the code's texts in that table (required where the code has several).
 */
export function problem<C extends FixedDetailCode, H extends string = never>(
  code: C,
  detail?: string,
  headers?: Readonly<Record<H, string>>
): Problem<C, H>
export function problem<C extends ProblemCode, H extends string = never>(
  code: C,
  detail: string,
  headers?: Readonly<Record<H, string>>
): Problem<C, H>
export function problem<C extends ProblemCode, H extends string>(
  code: C,
  detail?: string,
  headers?: Readonly<Record<H, string>>
): Problem<C, H> {
  const entry = PROBLEMS[code]
  const text = detail ?? (typeof entry.detail === "string" ? entry.detail : "")
  return headers === undefined
    ? { status: entry.status, code, detail: text }
    : { status: entry.status, code, detail: text, headers }
}

/** A problem's body as it is sent (RFC 9457): exactly type, title, status, detail, code, and errors only for fields. */
export const problemDocument = (problem: Problem) => ({
  type: "about:blank" as const,
  title: REASON_PHRASES[problem.status] ?? "Error",
  status: problem.status,
  detail: problem.detail,
  code: problem.code,
  ...(problem.errors !== undefined && {
    errors: problem.errors.map(({ pointer, code, detail }) => ({ pointer, code, detail }))
  })
})

/**
 * The most field issues a problem lists: every unknown field is an issue, so an uncapped list made a 13.9 KB body of
 * 1,500 unknown fields a 113 KB answer (docs/SECURITY.md, item 26). The shape stays the contract's; `detail` says
 * how many there were (docs/api.md, "Precise rules").
 */
export const MAX_LISTED_FIELD_ISSUES = 20

const FIELDS = PROBLEMS.validation_failed.detail

const validationProblem = (issues: ReadonlyArray<FieldIssue>): Problem<"validation_failed"> => {
  const listed = issues.length <= MAX_LISTED_FIELD_ISSUES ? issues : issues.slice(0, MAX_LISTED_FIELD_ISSUES)
  const detail =
    listed === issues ? FIELDS.fieldsInvalid : FIELDS.someFieldsListed(issues.length, MAX_LISTED_FIELD_ISSUES)
  return { ...problem("validation_failed", detail), errors: listed }
}

/** One domain error's answer over HTTP (`E`, the error; `C`, its codes; `H`, the headers its answers carry). */
export interface ErrorAnswer<E, C extends ProblemCode, H extends string> {
  /** The problem codes it is answered with; each code's status and texts are the problem table's (PROBLEMS). */
  readonly codes: ReadonlyArray<C>
  /** The headers its problems carry besides the common ones, as the OpenAPI document describes them. */
  readonly headers?: { readonly [Name in H]: AnswerHeader }
  /** Its problem: one of its codes, with the detail and the values of its headers the error's fields decide. */
  readonly problem: (error: E) => Problem<NoInfer<C>, Lowercase<NoInfer<H>>>
}

/** An entry, its codes and headers kept literal (none: `{}`), its problem checked against them. */
const answer = <E, const C extends ProblemCode, const H extends string = never>(
  entry: ErrorAnswer<E, C, H>
): ErrorAnswer<E, C, H> & { readonly headers: { readonly [Name in H]: AnswerHeader } } => ({
  ...entry,
  headers: entry.headers ?? ({} as { readonly [Name in H]: AnswerHeader })
})

const REALM = 'Bearer realm="api"'
const RETRY_AFTER = { description: "Seconds to wait before retrying", type: "integer" } as const

// A domain error's problems carry no request data, so those that need no field of the error are made once (the
// handler answers them on every refused request).
const NOT_FOUND = problem("not_found")
const MISSING_CREDENTIAL = problem("unauthenticated", undefined, { "www-authenticate": REALM })
const INVALID_TOKEN = problem("invalid_token", undefined, { "www-authenticate": `${REALM}, error="invalid_token"` })
const INSUFFICIENT_SCOPE = problem("insufficient_scope", undefined, {
  "www-authenticate": `${REALM}, error="insufficient_scope"`
})
const PRECONDITION_FAILED = problem("precondition_failed")
const UNKNOWN_CURSOR = problem("invalid_cursor")

/** Every domain error an operation may declare, by tag, with its answer (`ErrorAnswer`). */
export const DOMAIN_ERRORS = {
  ValidationError: answer({
    codes: ["validation_failed"],
    problem: (error: ValidationError) => validationProblem(error.issues)
  }),
  // Another user's resource and none at all answer alike (docs/api.md, "Errors").
  NotFound: answer({ codes: ["not_found"], problem: (_: NotFound) => NOT_FOUND }),
  // `unauthenticated` for a missing credential, `invalid_token` for one that is not accepted.
  Unauthenticated: answer({
    codes: ["unauthenticated", "invalid_token"],
    headers: { "WWW-Authenticate": { description: "Bearer challenge", type: "string" } },
    problem: (error: Unauthenticated) => (error.reason === "missing" ? MISSING_CREDENTIAL : INVALID_TOKEN)
  }),
  InsufficientScope: answer({
    codes: ["insufficient_scope"],
    headers: { "WWW-Authenticate": { description: "Bearer challenge (insufficient_scope)", type: "string" } },
    problem: (_: InsufficientScope) => INSUFFICIENT_SCOPE
  }),
  PreconditionFailed: answer({
    codes: ["precondition_failed"],
    problem: (_: PreconditionFailed) => PRECONDITION_FAILED
  }),
  Unavailable: answer({
    codes: ["unavailable"],
    headers: { "Retry-After": RETRY_AFTER },
    problem: (error: Unavailable) =>
      problem("unavailable", PROBLEMS.unavailable.detail.retryLater, {
        "retry-after": String(error.retryAfterSeconds)
      })
  }),
  UnknownCursor: answer({ codes: ["invalid_cursor"], problem: (_: UnknownCursor) => UNKNOWN_CURSOR })
} as const satisfies {
  readonly [Tag in DomainError["_tag"]]: ErrorAnswer<Extract<DomainError, { readonly _tag: Tag }>, ProblemCode, never>
}

export type DomainErrorTag = keyof typeof DOMAIN_ERRORS

/** The problem a domain error is answered with: its entry's (`DOMAIN_ERRORS`), one lookup by its tag. */
export const problemOf = (error: DomainError): Problem =>
  // Each entry takes its own error: the tag picks the entry whose parameter is this error's type.
  (DOMAIN_ERRORS[error._tag].problem as (error: DomainError) => Problem)(error)

/** The `Retry-After` of an answer the store or the drain asks to retry, as the OpenAPI document describes it. */
export const RETRY_AFTER_HEADER = RETRY_AFTER
