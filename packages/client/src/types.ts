import type {
  BodySpec,
  DeprecationNotice,
  OperationId,
  Operations,
  PROBLEM_CODE_STATUS,
  ProblemCode,
  ProblemCodeOf,
  ProblemSchema,
  SuccessValueOf,
  TypedOperation
} from "@accord/contract"
import type { Schema } from "effect"

/** Flattens an intersection for readable hovers and error messages. */
type Simplify<T> = { [K in keyof T]: T[K] } & {}

/** The operation named `Id` in the contract's table, with the static types of its Schemas. */
export type OperationOf<Id extends OperationId> = Operations[Id]

/** Path parameters as sent: their Schema's Encoded side, required when the path has any. */
type ParamsInput<P> = P extends Schema.Top ? { readonly params: P["Encoded"] } : { readonly params?: never }

/** Query parameters as sent: their Schema's Encoded side (text), each optional. */
type QueryInput<Q> = Q extends Schema.Top ? { readonly query?: Q["Encoded"] } : { readonly query?: never }

/**
 * The body as sent: the body Schema's Encoded side (what the server decodes), required when the operation requires
 * one (docs/api.md, "Precise rules": no body is `{}` where one is optional).
 */
type BodyInput<B> =
  B extends BodySpec<infer S>
    ? B["required"] extends true
      ? { readonly body: S["Encoded"] }
      : { readonly body?: S["Encoded"] }
    : { readonly body?: never }

/**
 * A conditional write's `If-Match` (docs/api.md, "Conditional requests"): the ETag of the version the caller read
 * (a success's `etag`), or `*`; a stale one is answered 412 `precondition_failed` and changes nothing.
 */
type ConditionalInput<C> = C extends "ifMatch" | "ifMatchRequirable"
  ? { readonly ifMatch?: string }
  : { readonly ifMatch?: never }

/**
 * The request of an operation: `params`, `query` and `body` typed from its Schemas, and `ifMatch` for a conditional
 * write.
 */
export type RequestInputOf<O extends TypedOperation> = Simplify<
  ParamsInput<O["params"]> & QueryInput<O["query"]> & BodyInput<O["body"]> & ConditionalInput<O["conditional"]>
>

/**
 * A conditional read's `If-None-Match` (docs/api.md, "Conditional requests"): the ETag of the version the caller has;
 * when it is still current the answer is 304 (`AccordNotModified`) with no body.
 */
type ReadConditionInput<C> = C extends "ifNoneMatch"
  ? { readonly ifNoneMatch?: string }
  : { readonly ifNoneMatch?: never }

/** What a method of the client takes: the operation's request, and an optional signal that aborts it. */
export type RequestOf<O extends TypedOperation> = Simplify<
  RequestInputOf<O> & ReadConditionInput<O["conditional"]> & { readonly signal?: AbortSignal }
>

/** The success value: the success Schema's decoded type; none (`void`, undefined at run time) for a 204 (no body). */
export type SuccessOf<O extends TypedOperation> = SuccessValueOf<O>

/** The status of a problem with code `C` (each code has one, PROBLEM_CODE_STATUS). */
export type ProblemStatusOf<C extends ProblemCode> = (typeof PROBLEM_CODE_STATUS)[C]

/*
 * Hover text: an editor shows a type by the alias that made it, so a code computed by `ProblemCodeOf<O>` hovers as
 * `ProblemCodeOf<TypedOperation<...>>` and a status as `ProblemStatusOf<...>`. Indexing a mapped type written inline
 * (not through an alias, whose name would show instead) builds the same union afresh, without an alias: it hovers
 * as its literals (`"not_found" | "precondition_failed" | ...`, `400 | 401 | ...`). test/hover.test.ts asks the
 * compiler. Used wherever a result, a problem or an error carries codes or statuses (effect.ts, errors.ts too).
 */

/** A problem+json body (the contract's ProblemSchema) whose `code` is one of `C`. */
export type ProblemBody<C extends ProblemCode = ProblemCode> = {
  readonly [K in keyof typeof ProblemSchema.Type]: K extends "code"
    ? C
    : K extends "status"
      ? { [S in C]: (typeof PROBLEM_CODE_STATUS)[S] }[C]
      : (typeof ProblemSchema.Type)[K]
}

/** An answer with the operation's success status, its body decoded with the success Schema. */
export interface AccordSuccess<Status extends number, Value> {
  readonly ok: true
  readonly status: Status
  readonly value: Value
  /** The answer's strong `ETag`, for the preferences and payment methods (send it back as `ifMatch`); else undefined. */
  readonly etag: string | undefined
}

/** The answer to a read sent with `ifNoneMatch` that matched: the caller's version is current; no body. */
export interface AccordNotModified {
  readonly ok: true
  readonly status: 304
  readonly notModified: true
  readonly etag: string | undefined
}

/** An answer with a problem whose code is one the operation can be answered with (`ProblemCodeOf`). */
export interface AccordFailure<C extends ProblemCode> {
  readonly ok: false
  readonly status: { [S in C]: (typeof PROBLEM_CODE_STATUS)[S] }[C]
  readonly problem: ProblemBody<C>
}

/** What a method of the client resolves to: narrow on `ok`. */
export type ResultOf<O extends TypedOperation> =
  AccordSuccess<O["success"]["status"], SuccessOf<O>> | AccordFailure<{ [C in ProblemCodeOf<O>]: C }[ProblemCodeOf<O>]>

/** A function of `Request` to `R`, whose argument may be left out when nothing in `Request` is required. */
export type Call<Request, R> = Record<never, never> extends Request ? (request?: Request) => R : (request: Request) => R

/** A conditional read: with `ifNoneMatch` it may also be answered 304 (`AccordNotModified`). */
export interface ConditionalReadMethod<O extends TypedOperation> {
  (request: RequestOf<O> & { readonly ifNoneMatch: string }): Promise<ResultOf<O> | AccordNotModified>
  (request?: RequestOf<O>): Promise<ResultOf<O>>
}

/** A client method: the operation's request in, its result out. */
export type ClientMethod<O extends TypedOperation> = O["conditional"] extends "ifNoneMatch"
  ? ConditionalReadMethod<O>
  : Call<RequestOf<O>, Promise<ResultOf<O>>>

/** The client: one method per operation, named by its operationId. */
export type AccordClientMethods = { readonly [Id in OperationId]: ClientMethod<OperationOf<Id>> }

/**
 * The credential sent as `Authorization: Bearer <token>` on credentialed operations: a string, or a function asked
 * before each credentialed request (sync or async), so a refreshed token is used as soon as it exists. `undefined`
 * (or no `token` at all) sends no Authorization header: the server answers 401 `unauthenticated`.
 */
export type TokenSource = string | (() => string | undefined | PromiseLike<string | undefined>)

/**
 * What the client calls to send a request: the global `fetch`, or any function of the same shape for one `Request`,
 * e.g. `@accord/adapter-fetch`'s handler for in-process calls (same bytes, no socket).
 */
export type FetchLike = (request: Request) => Promise<Response>

export interface AccordClientOptions {
  /**
   * The API's base URL including the mount prefix, e.g. `http://127.0.0.1:3000/api`; operation paths are appended to
   * it. Absolute outside a browser (a `Request` needs one); a trailing slash is ignored.
   */
  readonly baseUrl: string
  readonly token?: TokenSource
  /** Default: the global `fetch`. */
  readonly fetch?: FetchLike
  /**
   * Told when an answer says its operation is deprecated (docs/api.md, "Versioning": RFC 9745 `Deprecation`, RFC 8594
   * `Sunset`, `Link` to its successor), with the operation called; the answer is returned as usual. The client never
   * calls a deprecated alias itself: this is for a server that deprecates an operation the client does call.
   */
  readonly onDeprecation?: (notice: DeprecationNoticeOf) => void
}

/** What `onDeprecation` is told: the operation called, and what its answer's headers announced. */
export interface DeprecationNoticeOf extends DeprecationNotice {
  readonly operationId: OperationId
}
