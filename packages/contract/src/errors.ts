import type { Access, Conditional, Operation } from "./operation.js"
import { PROBLEM_CODE_STATUS, PROBLEM_CODES, type ProblemCode } from "./problem.js"

/**
 * The domain errors an operation may declare, by tag, each with the status it is answered with: the one place a
 * domain error meets HTTP. An implementation fails with tagged errors that carry no HTTP (core's domain/errors.ts).
 */
export const DOMAIN_ERROR_STATUS = {
  ValidationError: 400,
  NotFound: 404,
  Unauthenticated: 401,
  InsufficientScope: 403,
  PreconditionFailed: 412,
  Unavailable: 503
} as const

export type DomainErrorTag = keyof typeof DOMAIN_ERROR_STATUS

/** A problem code whose status is `Status`. */
type CodeWithStatus<Status extends number> = {
  readonly [C in ProblemCode]: (typeof PROBLEM_CODE_STATUS)[C] extends Status ? C : never
}[ProblemCode]

/**
 * The problem codes each domain error is answered with: `Unauthenticated` is `unauthenticated` for a missing
 * credential and `invalid_token` for one that is not accepted. Each code has its error's DOMAIN_ERROR_STATUS.
 */
export const DOMAIN_ERROR_CODES = {
  ValidationError: ["validation_failed"],
  NotFound: ["not_found"],
  Unauthenticated: ["unauthenticated", "invalid_token"],
  InsufficientScope: ["insufficient_scope"],
  PreconditionFailed: ["precondition_failed"],
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

/**
 * A conditional write whose If-Match the host may require (`--require-if-match`): 428 `precondition_required`
 * (docs/api.md, "Conditional requests"). Its 412 is the declared domain error `PreconditionFailed`.
 */
const REQUIRABLE_IF_MATCH_CODES = ["precondition_required"] as const satisfies ReadonlyArray<ProblemCode>

/** What decides an operation's problem codes: a typed operation gives its exact union, the erased view every code it may have. */
export interface ProblemCodeSource {
  readonly access: Access
  readonly body: unknown
  readonly params: unknown
  readonly errors: ReadonlyArray<DomainErrorTag>
  readonly conditional?: Conditional | undefined
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
  | ("ifMatchRequirable" extends O["conditional"] ? (typeof REQUIRABLE_IF_MATCH_CODES)[number] : never)

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
  if (operation.conditional === "ifMatchRequirable") add(REQUIRABLE_IF_MATCH_CODES)
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
