import { FIELD_ISSUE_CODES } from "@accord/domain/values"
import { Schema } from "effect"
import { WireInt } from "./wire/wire-int.js"

/**
 * Every problem code the server answers with (docs/api.md, "Errors"), each with its one status and the texts of its
 * `detail`, one per situation: the one place a code meets its status and its words. Core makes every problem from
 * this table (`problem(code, detail)`), the OpenAPI examples are built from it, and the types of the client read it.
 * A detail never carries what the client sent, but for the transfer coding it named (a token, already checked
 * against its grammar).
 */
export const PROBLEMS = {
  invalid_json: {
    status: 400,
    detail: {
      bodyRequired: "A JSON body is required.",
      notUtf8: "The body is not valid UTF-8.",
      notJson: "The body is not valid JSON.",
      tooDeep: (levels: number) => `The body is not acceptable JSON: JSON nesting is deeper than ${levels} levels.`,
      repeatedKey: "The body is not acceptable JSON: a key appears more than once in one object.",
      forbiddenKey: "The body is not acceptable JSON: the keys __proto__, constructor and prototype are not allowed.",
      unreadable: "The body could not be read."
    }
  },
  invalid_body: { status: 400, detail: "The body must be a JSON object." },
  invalid_query: {
    status: 400,
    detail: "The query is not acceptable: only the parameters this operation lists, each at most once, within bounds."
  },
  invalid_cursor: { status: 400, detail: "The cursor (after) is not one of your events; start from the first page." },
  validation_failed: {
    status: 400,
    detail: {
      fieldsInvalid: "Some fields are invalid.",
      someFieldsListed: (count: number, listed: number) =>
        `${count} fields are invalid; the first ${listed} by pointer are listed.`
    }
  },
  unauthenticated: { status: 401, detail: "Send a credential: Authorization: Bearer <token>." },
  invalid_token: { status: 401, detail: "The credential is malformed, unknown or expired." },
  insufficient_scope: { status: 403, detail: "This credential may not use this operation." },
  not_found: { status: 404, detail: "No resource exists at this address." },
  method_not_allowed: { status: 405, detail: "This method is not allowed here; see the Allow header." },
  not_acceptable: {
    status: 406,
    detail: "None of the media types the Accept header names is available here: application/json or text/event-stream."
  },
  // docs/api.md, "Versioning": a deprecated path past its sunset; the detail names the path to call instead.
  gone: {
    status: 410,
    detail: {
      sunset: (successor: string) => `This path was retired at its sunset date; call ${successor} instead.`
    }
  },
  payload_too_large: {
    status: 413,
    detail: {
      overLimit: (limit: number) => `The body is larger than ${limit} bytes.`,
      chunkExtensions: "The chunk extensions of the body are larger than the server accepts."
    }
  },
  unsupported_media_type: { status: 415, detail: "The body must be sent as application/json (UTF-8)." },
  not_implemented: {
    status: 501,
    detail: {
      transferCoding: (coding: string) =>
        `The transfer coding ${JSON.stringify(coding)} is not implemented; send the body as it is, or chunked.`
    }
  },
  rate_limited: { status: 429, detail: "Too many requests with this credential; retry later." },
  too_many_streams: {
    status: 429,
    detail: "This credential has as many event streams open as the server allows; close one or retry later."
  },
  precondition_failed: {
    status: 412,
    detail: "The resource has changed since the If-Match entity tag was read; read it again."
  },
  precondition_required: {
    status: 428,
    detail: "This server requires If-Match with the entity tag of the version read (from its ETag)."
  },
  uri_too_long: { status: 414, detail: { overLimit: (max: number) => `The path is longer than ${max} characters.` } },
  unavailable: {
    status: 503,
    detail: {
      retryLater: "The service cannot answer right now; retry later.",
      draining: "The service is shutting down and takes no new requests; retry later.",
      streams: "The server has as many event streams open as it allows; retry later."
    }
  },
  internal: { status: 500, detail: "An unexpected error occurred." },
  // Refusals Node makes before a request exists (answered by @accord/node).
  bad_request: { status: 400, detail: "The request is not valid HTTP/1.1." },
  request_timeout: { status: 408, detail: "The request did not arrive completely in time." },
  headers_too_large: { status: 431, detail: "The request line and headers are larger than the server accepts." },
  expectation_failed: { status: 417, detail: "The server meets no expectation but 100-continue." }
} as const

export type ProblemCode = keyof typeof PROBLEMS

// The tables below are built by calls a bundler cannot tell are pure: marked so, a client that imports only
// `isProblemWithCode` from this module (@accord/contract/routes) bundles neither them nor effect's Schema.

/** Every problem code, in the table's order (the OpenAPI enum's). */
export const PROBLEM_CODES = /* @__PURE__ */ Object.keys(PROBLEMS) as ReadonlyArray<ProblemCode>

/** The status of a problem with code `C` (each code has one). */
export type StatusOf<C extends ProblemCode> = (typeof PROBLEMS)[C]["status"]

// A call of a function of the codes, so that the whole expression is the pure call (its argument a plain name).
const statusesOf = (codes: ReadonlyArray<ProblemCode>) =>
  Object.fromEntries(codes.map((code) => [code, PROBLEMS[code].status]))

/** Every code with its status, as a plain record (what the fuzz and a client check an answer against). */
export const PROBLEM_CODE_STATUS = /* @__PURE__ */ statusesOf(PROBLEM_CODES) as {
  readonly [C in ProblemCode]: StatusOf<C>
}

/** The codes whose `detail` is one text whatever happened: a problem of one of them needs no detail given. */
export type FixedDetailCode = {
  readonly [C in ProblemCode]: (typeof PROBLEMS)[C]["detail"] extends string ? C : never
}[ProblemCode]

/** Every status Accord answers with: its problems' and its successes' (200, 201, 204 No Content, 304 Not Modified). */
type AnswerStatus = StatusOf<ProblemCode> | 200 | 201 | 204 | 304

/**
 * RFC 9110 reason phrases for every status Accord answers with: a problem's `title`, a response's description in the
 * OpenAPI document. A code with a status not listed does not compile.
 */
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
  406: "Not Acceptable",
  408: "Request Timeout",
  410: "Gone",
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
} satisfies { readonly [Status in AnswerStatus]: string }

export const PROBLEM_CONTENT_TYPE = "application/problem+json; charset=utf-8"

const FieldProblem = /* @__PURE__ */ Schema.Struct({
  pointer: Schema.String.annotate({ description: "JSON pointer to the field, e.g. /email" }),
  code: Schema.Literals(FIELD_ISSUE_CODES),
  detail: Schema.String
}).annotate({ identifier: "FieldProblem" })

/** The problem+json body every error carries (RFC 9457), as docs/api.md ("Errors") fixes it. */
export const ProblemSchema = /* @__PURE__ */ Schema.Struct({
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

/** A problem+json body (ProblemSchema's type) whose `code` is one of `C`. */
export type ProblemWithCode<C extends ProblemCode> = Omit<typeof ProblemSchema.Type, "code"> & { readonly code: C }

/** What a Schema.Struct accepts: an object that is not an array, its keys read as properties (inherited ones too). */
const isStruct = (input: unknown): input is { readonly [key: string]: unknown } =>
  typeof input === "object" && input !== null && !Array.isArray(input)

const isFieldProblem = (input: unknown): boolean =>
  isStruct(input) &&
  typeof input["pointer"] === "string" &&
  (FIELD_ISSUE_CODES as ReadonlyArray<unknown>).includes(input["code"]) &&
  typeof input["detail"] === "string"

/** `for...of`, not `every`: a hole in an array is an `undefined` item to the Schema, not an item skipped. */
const areFieldProblems = (input: unknown): boolean => {
  if (!Array.isArray(input)) return false
  for (const item of input as ReadonlyArray<unknown>) if (!isFieldProblem(item)) return false
  return true
}

/**
 * Whether `input` is a problem+json body, its `code` one of `codes`: the judgement of ProblemSchema with its `code`
 * narrowed to `codes` (test/problems.test.ts holds the two equal on arbitrary values), in plain code, so that a client
 * checks the problems it is answered with without carrying the Schema machinery (@accord/client). Fields the Schema
 * does not name are allowed, as the Schema allows (and drops) them.
 */
export const isProblemWithCode = <C extends ProblemCode>(
  input: unknown,
  codes: ReadonlyArray<C>
): input is ProblemWithCode<C> =>
  isStruct(input) &&
  input["type"] === "about:blank" &&
  typeof input["title"] === "string" &&
  Number.isInteger(input["status"]) &&
  typeof input["detail"] === "string" &&
  (codes as ReadonlyArray<unknown>).includes(input["code"]) &&
  (!("errors" in input) || areFieldProblems(input["errors"]))
