import { DOMAIN_ERRORS, RETRY_AFTER_HEADER, type AnswerHeader, type DomainErrorTag } from "./domain-errors.js"
import type { Access, Conditional, Operation } from "./operation.js"
import { PROBLEM_CODES, PROBLEMS, type ProblemCode } from "./problems.js"

// docs/api.md, "Errors": the checks a request goes through, in order, each declared once with the problem codes it may
// answer, the headers those answers carry and the request headers it reads (a check that answers with a domain error,
// the codes and headers of that error's entry, domain-errors.ts). The handler (core's handler.ts) is one
// linear function that makes these checks in this order; what an operation can be answered with (`problemCodesOf`,
// `ProblemCodeOf`), the OpenAPI document's responses and parameters, the order audit, the fuzz's oracle and the table
// in docs/api.md are all read from here.

const { Unauthenticated, InsufficientScope, ValidationError, NotFound } = DOMAIN_ERRORS

/**
 * Which operations a check applies to, as data: every field given must hold (none: every operation). Read by
 * `appliesTo` at run time and by `Holds` in the types, so the codes of an operation are derived once, both ways.
 */
export interface Applies {
  readonly access?: ReadonlyArray<Access>
  readonly body?: true
  readonly params?: true
  readonly query?: true
  readonly conditional?: ReadonlyArray<Conditional>
  readonly drains?: true
  /** Only an operation with a streamed representation (`stream`). */
  readonly stream?: true
}

/** A request header a check reads, as the OpenAPI document's parameter describes it, by conditional kind. */
export interface ReadHeader {
  readonly name: string
  readonly description: string
}

/** One step of the order of checks (docs/api.md, "Errors"). */
export interface PipelineCheck {
  readonly id: string
  /** What it refuses, in docs/api.md's words: the "Errors" table's first column. */
  readonly refuses: string
  /**
   * Whether its codes are an operation's: false for the route's own answers (an unknown path, a method the path does
   * not serve), which come before any operation is known.
   */
  readonly perOperation: boolean
  readonly appliesTo: Applies
  readonly codes: ReadonlyArray<ProblemCode>
  /** Headers its answers carry, besides the common ones. */
  readonly answerHeaders?: Readonly<Record<string, AnswerHeader>>
  /** Headers every later answer carries once it passed (the rate limit's quota). */
  readonly laterAnswersCarry?: ReadonlyArray<string>
  /** Codes the OpenAPI document leaves out of an operation's responses (a defect; bytes that are not HTTP). */
  readonly unlisted?: ReadonlyArray<ProblemCode>
  /** The request header it reads, by the operation's conditional kind (an OpenAPI parameter). */
  readonly reads?: { readonly [C in Conditional]?: ReadHeader }
}

const pipelineCheck = <const C extends PipelineCheck>(check: C): C => check

const CREDENTIALED = ["anyCredential", "user"] as const
const IF_MATCH =
  "Entity tags (strong comparison), or *: the write happens only if the current representation has one of them, else 412 precondition_failed and nothing changes."

/** The order of checks, the same in every adapter (docs/api.md, "Errors"). */
export const PIPELINE = [
  pipelineCheck({
    id: "http",
    refuses:
      "bytes that are not HTTP/1.1, a request that does not arrive in time, a request line and headers too large",
    perOperation: true,
    appliesTo: {},
    codes: ["bad_request", "request_timeout", "headers_too_large"],
    unlisted: ["bad_request"]
  }),
  pipelineCheck({
    id: "expectation",
    refuses: "an Expect other than 100-continue (a standalone server answers it before any route)",
    perOperation: false,
    appliesTo: {},
    codes: ["expectation_failed"]
  }),
  pipelineCheck({
    id: "path",
    refuses: "a path longer than the limit (default 2048 characters)",
    perOperation: true,
    appliesTo: {},
    codes: ["uri_too_long"]
  }),
  pipelineCheck({
    id: "route",
    refuses: "an unknown path; a method the path does not serve (OPTIONS and a CORS preflight are answered here)",
    perOperation: false,
    appliesTo: {},
    codes: ["not_found", "method_not_allowed"],
    answerHeaders: { Allow: { description: "The methods the path serves", type: "string" } }
  }),
  pipelineCheck({
    id: "sunset",
    refuses: 'a deprecated path past its sunset date (docs/api.md, "Versioning"): the detail names its successor',
    perOperation: false,
    appliesTo: {},
    codes: ["gone"]
  }),
  pipelineCheck({
    id: "draining",
    refuses: "the readiness probe while the server drains",
    perOperation: true,
    appliesTo: { drains: true },
    codes: ["unavailable"],
    answerHeaders: { "Retry-After": RETRY_AFTER_HEADER }
  }),
  pipelineCheck({
    id: "credential",
    refuses: "a missing or a refused credential",
    perOperation: true,
    appliesTo: { access: CREDENTIALED },
    // The authenticator's refusal: the domain error Unauthenticated.
    codes: Unauthenticated.codes,
    answerHeaders: Unauthenticated.headers
  }),
  pipelineCheck({
    id: "rate-limit",
    refuses: "a credential over its rate limit",
    perOperation: true,
    appliesTo: { access: CREDENTIALED },
    codes: ["rate_limited"],
    answerHeaders: { "Retry-After": { description: "Seconds until the credential may send again", type: "integer" } },
    laterAnswersCarry: ["RateLimit", "RateLimit-Policy"]
  }),
  pipelineCheck({
    id: "scope",
    refuses: "an application's credential on a user's operation",
    perOperation: true,
    appliesTo: { access: ["user"] },
    codes: InsufficientScope.codes,
    answerHeaders: InsufficientScope.headers
  }),
  pipelineCheck({
    id: "accept",
    refuses: "an Accept that names neither application/json nor text/event-stream, on an operation that streams",
    perOperation: true,
    appliesTo: { stream: true },
    codes: ["not_acceptable"]
  }),
  pipelineCheck({
    id: "if-match-required",
    refuses: "a write without If-Match on a server that requires it (--require-if-match)",
    perOperation: true,
    appliesTo: { conditional: ["ifMatchRequirable"] },
    codes: ["precondition_required"]
  }),
  pipelineCheck({
    id: "body-headers",
    refuses: "a body's transfer coding other than chunked, media type other than JSON, declared size over the limit",
    perOperation: true,
    appliesTo: { body: true },
    codes: ["not_implemented", "unsupported_media_type", "payload_too_large"]
  }),
  pipelineCheck({
    id: "body",
    refuses: "a body over the limit as read, cut by the request timeout, not JSON, not a JSON object",
    perOperation: true,
    appliesTo: { body: true },
    codes: ["payload_too_large", "request_timeout", "invalid_json", "invalid_body"]
  }),
  pipelineCheck({
    id: "fields",
    refuses: "a field missing, of the wrong type, out of its bounds, or unknown",
    perOperation: true,
    appliesTo: { body: true },
    codes: ValidationError.codes
  }),
  pipelineCheck({
    id: "path-parameters",
    refuses: "a path parameter its Schema refuses (an id outside its charset names nothing)",
    perOperation: true,
    appliesTo: { params: true },
    codes: NotFound.codes
  }),
  pipelineCheck({
    id: "query",
    refuses: "a query parameter the operation does not list, one sent twice, or a value out of its bounds",
    perOperation: true,
    appliesTo: { query: true },
    codes: ["invalid_query"]
  }),
  pipelineCheck({
    id: "use-case",
    refuses:
      "what the operation's use case declares: an unknown resource or another user's, a stale If-Match, the store unreachable or full, password hashing saturated",
    perOperation: true,
    appliesTo: {},
    // The operation's declared errors (DOMAIN_ERRORS, domain-errors.ts), which this check reads per operation.
    codes: [],
    reads: {
      ifMatch: { name: "If-Match", description: IF_MATCH },
      ifMatchRequirable: {
        name: "If-Match",
        description: `${IF_MATCH} A server started with --require-if-match answers a PUT without it 428 precondition_required.`
      }
    }
  }),
  pipelineCheck({
    id: "streams",
    refuses:
      "a stream past the server's bound: per credential (default 5, 429 too_many_streams) or in total (default 1000, 503)",
    perOperation: true,
    appliesTo: { stream: true },
    codes: ["too_many_streams", "unavailable"],
    answerHeaders: { "Retry-After": RETRY_AFTER_HEADER }
  }),
  pipelineCheck({
    id: "if-none-match",
    refuses: "nothing: a read whose If-None-Match matches is 304 Not Modified, with no body",
    perOperation: true,
    appliesTo: { conditional: ["ifNoneMatch"] },
    codes: [],
    reads: {
      ifNoneMatch: {
        name: "If-None-Match",
        description:
          "Entity tags of representations the client has (weak comparison), or *: when one matches, 304 with the ETag and no body."
      }
    }
  }),
  pipelineCheck({
    id: "internal",
    refuses: "anything unexpected (logged with the request id)",
    perOperation: true,
    appliesTo: {},
    codes: ["internal"],
    unlisted: ["internal"]
  })
] as const

export type Pipeline = typeof PIPELINE
export type PipelineCheckId = Pipeline[number]["id"]

/** What decides an operation's problem codes: a typed operation gives its exact union, the erased view every code. */
export interface ProblemCodeSource {
  readonly access: Access
  readonly body: unknown
  readonly params: unknown
  readonly query?: unknown
  readonly errors: ReadonlyArray<DomainErrorTag>
  readonly conditional?: Conditional | undefined
  readonly unavailableWhileDraining?: boolean
  readonly stream?: unknown
}

/** Whether some member of `A` is among `B` (a union on the erased view: any may be). */
type Overlaps<A, B> = [Extract<A, B>] extends [never] ? false : true

/** `Applies` read in the types, as `appliesTo` reads it at run time. */
type Holds<P, O extends ProblemCodeSource> = [
  P extends { readonly access: ReadonlyArray<infer A> } ? Overlaps<O["access"], A> : true,
  P extends { readonly body: true } ? ([O["body"]] extends [undefined] ? false : true) : true,
  P extends { readonly params: true } ? ([O["params"]] extends [undefined] ? false : true) : true,
  P extends { readonly query: true } ? ([O["query"]] extends [undefined] ? false : true) : true,
  P extends { readonly conditional: ReadonlyArray<infer C> } ? Overlaps<O["conditional"], C> : true,
  P extends { readonly drains: true } ? Overlaps<O["unavailableWhileDraining"], true> : true,
  P extends { readonly stream: true } ? ([O["stream"]] extends [undefined] ? false : true) : true
] extends [true, true, true, true, true, true, true]
  ? true
  : false

/** The codes of each check of `Check` (a union: distributed) that is an operation's and holds for `O`. */
type CodesOfChecks<Check, O extends ProblemCodeSource> = Check extends {
  readonly perOperation: true
  readonly appliesTo: infer P
  readonly codes: ReadonlyArray<infer Code>
}
  ? Holds<P, O> extends true
    ? Code
    : never
  : never

/**
 * The problem codes an operation can be answered with, at the type level: the codes of every per-operation check that
 * holds for it, and those of its declared domain errors.
 */
export type ProblemCodeOf<O extends ProblemCodeSource> =
  CodesOfChecks<Pipeline[number], O> | (typeof DOMAIN_ERRORS)[O["errors"][number]]["codes"][number]

/** Whether `check` applies to `operation` (its `Applies`, read as `Holds` reads it in the types). */
export const appliesTo = (check: PipelineCheck, operation: ProblemCodeSource): boolean => {
  const { access, body, params, query, conditional, drains, stream } = check.appliesTo
  if (access !== undefined && !access.includes(operation.access)) return false
  if (body === true && operation.body === undefined) return false
  if (params === true && operation.params === undefined) return false
  if (query === true && operation.query === undefined) return false
  if (
    conditional !== undefined &&
    (operation.conditional === undefined || !conditional.includes(operation.conditional))
  )
    return false
  if (drains === true && operation.unavailableWhileDraining !== true) return false
  if (stream === true && operation.stream === undefined) return false
  return true
}

/**
 * The problem codes an operation can be answered with, at run time, in the problem table's order: what the OpenAPI
 * document, the client and the fuzz read.
 */
export const problemCodesOf = <O extends ProblemCodeSource>(operation: O): ReadonlyArray<ProblemCodeOf<O>> => {
  const codes = new Set<ProblemCode>()
  for (const check of PIPELINE)
    if (check.perOperation && appliesTo(check, operation)) for (const code of check.codes) codes.add(code)
  for (const tag of operation.errors) for (const code of DOMAIN_ERRORS[tag].codes) codes.add(code)
  // The checks above are the ones ProblemCodeOf makes on the type, so every code kept is in O's union.
  return PROBLEM_CODES.filter((code) => codes.has(code)) as ReadonlyArray<ProblemCodeOf<O>>
}

/** Codes the OpenAPI document does not list per operation (`unlisted` on their checks). */
const UNLISTED: ReadonlySet<ProblemCode> = new Set(
  PIPELINE.flatMap((check) => ("unlisted" in check ? check.unlisted : []))
)

/** Every error status an operation can answer, from its problem codes: what the OpenAPI document lists for it. */
export const errorStatusesOf = (operation: Operation): ReadonlyArray<number> => {
  const statuses = new Set<number>()
  for (const code of problemCodesOf(operation)) if (!UNLISTED.has(code)) statuses.add(PROBLEMS[code].status)
  return [...statuses].sort((a, b) => a - b)
}

/**
 * The headers an operation's problems with `status` carry besides the common ones: those of the checks (and declared
 * errors) that answer it with a code of that status (the OpenAPI document's response headers).
 */
export const answerHeadersOf = (operation: Operation, status: number): Readonly<Record<string, AnswerHeader>> => {
  const headers: Record<string, AnswerHeader> = {}
  const add = (codes: ReadonlyArray<ProblemCode>, more: Readonly<Record<string, AnswerHeader>> | undefined): void => {
    if (more !== undefined && codes.some((code) => PROBLEMS[code].status === status)) Object.assign(headers, more)
  }
  for (const check of PIPELINE)
    if (check.perOperation && appliesTo(check, operation))
      add(check.codes, "answerHeaders" in check ? check.answerHeaders : undefined)
  for (const tag of operation.errors) {
    const declared = DOMAIN_ERRORS[tag]
    add(declared.codes, declared.headers)
  }
  return headers
}

/** The request headers an operation's checks read (OpenAPI parameters), in the pipeline's order. */
export const readHeadersOf = (operation: Operation): ReadonlyArray<ReadHeader> => {
  const conditional = operation.conditional
  if (conditional === undefined) return []
  return PIPELINE.flatMap((check) => {
    const read = "reads" in check ? (check.reads as PipelineCheck["reads"])?.[conditional] : undefined
    return read === undefined || !appliesTo(check, operation) ? [] : [read]
  })
}

/** Headers every answer carries once the credential passed the rate limit (its quota), for the OpenAPI document. */
export const LATER_ANSWERS_CARRY: ReadonlyArray<string> = PIPELINE.flatMap((check) =>
  "laterAnswersCarry" in check ? check.laterAnswersCarry : []
)
