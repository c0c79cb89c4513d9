import type { FieldIssueCode } from "@accord/domain/values"
import type { Schema } from "effect"
import type { DomainErrorTag } from "./checks.js"

export type HttpMethod = "GET" | "POST" | "PUT"

/**
 * Who may call an operation (docs/api.md, "Authentication"): anyone, any valid credential (a user's or an
 * application's), or a user only.
 */
export type Access = "public" | "anyCredential" | "user"

/**
 * How an operation takes part in conditional requests (docs/api.md, "Conditional requests"); its 200 carries a strong
 * `ETag` either way:
 * - `ifNoneMatch`: a GET; an `If-None-Match` that matches (weak comparison) is 304 with the ETag and no body;
 * - `ifMatch`: a PUT; an `If-Match` that does not match (strong comparison) is 412 `precondition_failed`, checked in
 *   the same atomic step as the write (so it declares `PreconditionFailed`);
 * - `ifMatchRequirable`: the same, and with the host's `requireIfMatch` a PUT without `If-Match` is 428
 *   `precondition_required`.
 */
export type Conditional = "ifNoneMatch" | "ifMatch" | "ifMatchRequirable"

/** A JSON body an operation reads: the Schema it is decoded with (a client sends its Encoded side) and whether it may be absent. */
export interface BodySpec<S extends Schema.Decoder<unknown> = Schema.Decoder<unknown>> {
  readonly schema: S
  /** `false`: no body at all counts as `{}` (docs/api.md, "Precise rules"). */
  readonly required: boolean
}

/** The success answer: its status and the Schema of its JSON body (a client decodes with it). */
export interface SuccessSpec<S extends Schema.Codec<unknown, unknown> = Schema.Codec<unknown, unknown>> {
  readonly status: 200 | 201
  readonly schema: S
}

/** Path parameters: a Struct of their Schemas, by name; a value one refuses is 404 `not_found`. */
export type ParamsSchema = Schema.Decoder<unknown> & { readonly fields: Readonly<Record<string, Schema.Top>> }

/** The body an implementation is given: the body Schema's decoded type, or undefined when the operation reads none. */
export type BodyOf<B extends BodySpec | undefined> = B extends BodySpec<infer S> ? S["Type"] : undefined

/**
 * Query parameters: a Struct of their Schemas, by name, each decoding the parameter's text; every one optional. A
 * parameter not listed, one sent twice, or a value its Schema refuses is 400 `invalid_query`.
 */
export type QuerySchema = Schema.Decoder<unknown> & { readonly fields: Readonly<Record<string, Schema.Top>> }

/** The query an implementation is given: its Schema's decoded type, or undefined when the operation reads none. */
export type QueryOf<Q extends Schema.Decoder<unknown> | undefined> =
  Q extends Schema.Decoder<unknown> ? Q["Type"] : undefined

/** The path parameters an implementation is given: their Schema's decoded type, or undefined when the path has none. */
export type ParamsOf<P extends Schema.Decoder<unknown> | undefined> =
  P extends Schema.Decoder<unknown> ? P["Type"] : undefined

/**
 * An operation as written in its area's table (operations/*.ts): data only. Its implementation is bound to it by
 * operationId (core's implementation map); its text for people and its examples are its area's `docs` (OperationDocs).
 * The literal types of its id, method, path, access and conditional kind and the static types of its Schemas are kept
 * (see TypedOperation).
 */
export interface OperationSpec<
  Id extends string,
  M extends HttpMethod,
  Path extends string,
  A extends Access,
  B extends BodySpec | undefined,
  P extends ParamsSchema | undefined,
  Success extends SuccessSpec,
  Tag extends DomainErrorTag,
  C extends Conditional | undefined = undefined,
  D extends boolean = false,
  Q extends QuerySchema | undefined = undefined
> {
  readonly operationId: Id
  readonly method: M
  /** Relative to the mount prefix, as docs/api.md ("Routes") writes it; `{name}` is a path parameter. */
  readonly path: Path
  /** Answered only as written, not also without its trailing slash (docs/api.md, "Routes"); default false. */
  readonly exact?: boolean
  readonly access: A
  /** The JSON body and the Schema it is decoded with; absent: the operation reads no body. */
  readonly body?: B
  /** Path parameters and their Schemas, one field per `{name}` of the path. */
  readonly params?: P
  /** Query parameters and their Schemas (a GET's); absent: the query is ignored, as it always was. */
  readonly query?: Q
  readonly success: Success
  /**
   * The domain errors an implementation may fail with (by tag; checks.ts gives each its problem codes); its problem
   * codes and the OpenAPI errors derive from this list.
   */
  readonly errors: ReadonlyArray<Tag>
  /**
   * A readiness probe: answered 503 `unavailable` without running while the host drains (`HttpHandlerOptions`
   * `isDraining`), so it must declare `Unavailable`.
   */
  readonly unavailableWhileDraining?: "Unavailable" extends Tag ? D : false
  /** Conditional requests (a conditional write declares `PreconditionFailed`: its 412). */
  readonly conditional?: C
}

/**
 * An operation as a handler, the OpenAPI generator and a client read it, its static types erased. They are checked
 * once, where the table is written (`defineOperation`).
 */
export interface Operation {
  readonly operationId: string
  readonly method: HttpMethod
  /** Relative to the mount prefix, with `{name}` for a path parameter. */
  readonly path: string
  readonly exact: boolean
  readonly access: Access
  /** Undefined when the operation reads no body. */
  readonly body: BodySpec | undefined
  /** Undefined when the path has no parameter. */
  readonly params: ParamsSchema | undefined
  /** Undefined when the operation reads no query. */
  readonly query: QuerySchema | undefined
  readonly success: { readonly status: 200 | 201; readonly schema: Schema.Top }
  readonly errors: ReadonlyArray<DomainErrorTag>
  /** Answered 503 `unavailable` while the host drains, before anything runs (a readiness probe). */
  readonly unavailableWhileDraining: boolean
  /** Undefined when the operation takes no part in conditional requests. */
  readonly conditional: Conditional | undefined
}

/**
 * An operation with the static types it was written with: what a typed client derives its methods from (the body
 * Schema's Encoded side is what it sends, the success Schema what it decodes, `ProblemCodeOf` the codes it may be
 * answered) and what an implementation is checked against. The erased `Operation` view of the same object is what
 * the handler and the OpenAPI generator read.
 */
export interface TypedOperation<
  Id extends string = string,
  M extends HttpMethod = HttpMethod,
  Path extends string = string,
  A extends Access = Access,
  B extends BodySpec | undefined = BodySpec | undefined,
  P extends ParamsSchema | undefined = ParamsSchema | undefined,
  Success extends SuccessSpec = SuccessSpec,
  Tag extends DomainErrorTag = DomainErrorTag,
  C extends Conditional | undefined = Conditional | undefined,
  D extends boolean = boolean,
  Q extends QuerySchema | undefined = QuerySchema | undefined
> extends Operation {
  readonly operationId: Id
  readonly method: M
  readonly path: Path
  readonly access: A
  readonly body: B
  readonly params: P
  readonly query: Q
  readonly success: Success
  readonly errors: ReadonlyArray<Tag>
  readonly conditional: C
  readonly unavailableWhileDraining: D
}

/** Checks an operation's declarations against each other and keeps their static types on the result. */
export const defineOperation = <
  const Id extends string,
  const M extends HttpMethod,
  const Path extends string,
  const A extends Access,
  const Success extends SuccessSpec,
  const Tag extends DomainErrorTag,
  const B extends BodySpec | undefined = undefined,
  P extends ParamsSchema | undefined = undefined,
  const C extends Conditional | undefined = undefined,
  const D extends boolean = false,
  Q extends QuerySchema | undefined = undefined
>(
  spec: OperationSpec<Id, M, Path, A, B, P, Success, Tag, C, D, Q>
): TypedOperation<Id, M, Path, A, B, P, Success, Tag, C, D, Q> => ({
  operationId: spec.operationId,
  method: spec.method,
  path: spec.path,
  exact: spec.exact ?? false,
  access: spec.access,
  // Absent in the spec means absent in the type too (B and P default to undefined).
  body: spec.body as B,
  params: spec.params as P,
  query: spec.query as Q,
  success: spec.success,
  errors: spec.errors,
  unavailableWhileDraining: (spec.unavailableWhileDraining ?? false) as D,
  // Absent in the spec means undefined in the type too (C defaults to undefined).
  conditional: spec.conditional as C
})

/**
 * The area an operation belongs to: the OpenAPI document's tags, one section each on the API reference page. The
 * first path segment for the three SPEC areas; `service` for health.
 */
export type OperationTag = "plans" | "users" | "payments" | "service"

/** An operation's path or query parameter, as a person reads it (OpenAPI); its example is a decoded value. */
export interface ParameterDocs<A = string> {
  readonly description: string
  readonly example: A
}

/** An operation that reads a body: a request its fields refuse, and the `errors` of the 400 it gets. */
export interface ValidationExample {
  readonly request: unknown
  readonly errors: ReadonlyArray<{ readonly pointer: string; readonly code: FieldIssueCode; readonly detail: string }>
}

/** Each query parameter of an operation that reads some, by name. */
type QueryDocs<O extends TypedOperation> = O["query"] extends QuerySchema
  ? { readonly query: { readonly [K in keyof O["query"]["fields"]]: ParameterDocs<O["query"]["fields"][K]["Type"]> } }
  : { readonly query?: never }

/** Each path parameter of an operation that has some, by name. */
type ParamsDocs<O extends TypedOperation> = O["params"] extends ParamsSchema
  ? { readonly params: { readonly [K in keyof O["params"]["fields"]]: ParameterDocs } }
  : { readonly params?: never }

/**
 * An operation that reads a body: the request a person would send, in wire form (without it an API reference page
 * pre-fills a body from the schema alone, bounds as values and the read-only fields, which "Execute" would then send:
 * docs/api.md, "OpenAPI document"), and a request its fields refuse with the `errors` of the 400 it gets (core's
 * openapi-examples.test.ts sends it and compares).
 */
type BodyDocs<O extends TypedOperation> =
  O["body"] extends BodySpec<infer S>
    ? { readonly requestExample: S["Encoded"]; readonly validationExample: ValidationExample }
    : { readonly requestExample?: never; readonly validationExample?: never }

/**
 * What the OpenAPI document says of an operation to a person, and the examples of its requests and answers: its
 * area's `docs` entry, read by the OpenAPI generator only, so it stays out of a client's bundle.
 */
export type OperationDocs<O extends TypedOperation = TypedOperation> = {
  /** Its area: one OpenAPI tag. */
  readonly tag: OperationTag
  /** One line, the OpenAPI `summary`. */
  readonly summary: string
  /** What a caller needs to know beyond the summary (OpenAPI `description`, CommonMark); docs/api.md is the contract. */
  readonly description: string
  /** The body of its success answer, in wire form (timestamps as strings). */
  readonly successExample: O["success"]["schema"]["Encoded"]
} & ParamsDocs<O> &
  QueryDocs<O> &
  BodyDocs<O>

/** An operation's docs as the OpenAPI generator reads them, their static types erased. */
export interface ErasedOperationDocs {
  readonly tag: OperationTag
  readonly summary: string
  readonly description: string
  readonly successExample: unknown
  readonly params?: Readonly<Record<string, ParameterDocs>>
  readonly query?: Readonly<Record<string, ParameterDocs<unknown>>>
  readonly requestExample?: unknown
  readonly validationExample?: ValidationExample
}

/** An area's docs: one entry per operation of its table, or it does not compile. */
export type DocsOf<Table extends Readonly<Record<string, TypedOperation>>> = {
  readonly [Id in keyof Table]: OperationDocs<Table[Id]>
}

/** A route: one path, its operations (by method), as the router compiles them. */
export interface Route<O extends Operation = Operation> {
  /** Path relative to the mount prefix, as written in docs/api.md ("Routes") and the OpenAPI document. */
  readonly path: string
  /** Exact routes do not also answer without their trailing slash (health, openapi.json, docs). */
  readonly exact: boolean
  readonly operations: ReadonlyArray<O>
}

/**
 * The methods a path serves, as `Allow` lists them (docs/api.md, "Precise rules"): its operations' methods, HEAD where
 * GET is, and OPTIONS, sorted. The router answers with it, and the audits and the fuzz expect it.
 */
export const allowedMethods = (methods: Iterable<string>): ReadonlyArray<string> => {
  const allowed = new Set(methods)
  if (allowed.has("GET")) allowed.add("HEAD")
  allowed.add("OPTIONS")
  return [...allowed].sort()
}

/** Characters a regular expression reads as syntax, escaped in a path's literal segments. */
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * What a route's path matches (docs/api.md, "Routes"): its literal segments as written, each `{name}` one non-empty
 * segment (still percent-encoded), and, unless `exact`, the same path without its trailing slash. `params` are the
 * names, in the order the pattern's groups capture them.
 */
export const routePattern = (
  path: string,
  exact: boolean
): { readonly pattern: RegExp; readonly params: ReadonlyArray<string> } => {
  const bare = path.endsWith("/") ? path.slice(0, -1) : path
  const params: Array<string> = []
  const body = bare
    .split("/")
    .slice(1)
    .map((segment) => {
      if (!(segment.startsWith("{") && segment.endsWith("}"))) return `/${escapeRegExp(segment)}`
      params.push(segment.slice(1, -1))
      return "/([^/]+)"
    })
    .join("")
  return { pattern: new RegExp(`^${body}${exact ? "" : "/?"}$`), params }
}

/** The `Allow` header of a path whose operations have `methods`: `allowedMethods`, joined by ", ". */
export const allowHeader = (methods: Iterable<string>): string => allowedMethods(methods).join(", ")
