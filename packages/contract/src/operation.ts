import type { FieldIssueCode } from "@accord/domain/values"
import type { Schema } from "effect"
import { DeprecationDeclarationError, makeDeprecation, type Deprecation, type DeprecationSpec } from "./deprecation.js"
import type { DomainErrorTag } from "./domain-errors.js"

/**
 * The methods an operation may have. HEAD is answered wherever GET is and OPTIONS on every path (docs/api.md, "Precise
 * rules"): neither is an operation's.
 */
export type HttpMethod = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

/**
 * Who may call an operation (docs/api.md, "Authentication"): anyone, any valid credential (a user's or an
 * application's), or a user only.
 */
export type Access = "public" | "anyCredential" | "user"

/**
 * How an operation takes part in conditional requests (docs/api.md, "Conditional requests"); a 200 carries a strong
 * `ETag` either way:
 * - `ifNoneMatch`: a GET; an `If-None-Match` that matches (weak comparison) is 304 with the ETag and no body;
 * - `ifMatch`: a write; an `If-Match` that does not match (strong comparison) is 412 `precondition_failed`, checked in
 *   the same atomic step as the write (so it declares `PreconditionFailed`);
 * - `ifMatchRequirable`: the same, and with the host's `requireIfMatch` a write without `If-Match` is 428
 *   `precondition_required`.
 */
export type Conditional = "ifNoneMatch" | "ifMatch" | "ifMatchRequirable"

/** A JSON body an operation reads: the Schema it is decoded with (a client sends its Encoded side) and whether it may be absent. */
export interface BodySpec<S extends Schema.Decoder<unknown> = Schema.Decoder<unknown>> {
  readonly schema: S
  /** `false`: no body at all counts as `{}` (docs/api.md, "Precise rules"). */
  readonly required: boolean
}

/**
 * The success answer: 200 or 201 with a JSON body of its Schema (a client decodes with it), or 204 No Content, with no
 * body and no Schema.
 */
export type SuccessSpec<S extends Schema.Top = Schema.Codec<unknown, unknown>> =
  { readonly status: 200 | 201; readonly schema: S } | { readonly status: 204; readonly schema?: undefined }

/**
 * A second representation of a GET's answer, streamed (docs/api.md, "Events"): Server-Sent Events, each event's
 * `data` one item of `schema` as JSON and its `id` the item's cursor, answered when the request's `Accept` prefers
 * `text/event-stream`; a resume point in `Last-Event-ID` (else the `after` query). The JSON answer stays the default.
 */
export interface StreamSpec<S extends Schema.Top = Schema.Top> {
  readonly mediaType: "text/event-stream"
  readonly schema: S
  /** The query parameter `Last-Event-ID` stands for (the cursor), decoded by its Schema when sent as the header. */
  readonly resumeParameter: string
}

/** Path parameters: a Struct of their Schemas, by name; a value one refuses is 404 `not_found`. */
export type ParamsSchema = Schema.Decoder<unknown> & { readonly fields: Readonly<Record<string, Schema.Top>> }

/**
 * Query parameters: a Struct of their Schemas, by name, each decoding the parameter's text; every one optional. A
 * parameter not listed, one sent twice, or a value its Schema refuses is 400 `invalid_query`.
 */
export type QuerySchema = Schema.Decoder<unknown> & { readonly fields: Readonly<Record<string, Schema.Top>> }

/**
 * What an operation does to the records the API shows (docs/api.md): named by the record (`payment_methods`, the seed's
 * name for it where it has one), read by a model of the API (the fuzz's) rather than written again per operation.
 * - `reads`: the caller's one record of that kind, or with `item`, the one the path parameter `item` names (one of
 *   another user's, or none, is 404); `lists`: all of the caller's, as `{"data": [...]}`;
 * - `creates`: a new one; `merges`: the caller's one record, the fields the body sends replacing theirs;
 * - `updates` / `deletes`: the caller's record named by the path parameter `item` (one of another user's, or none, is
 *   404); `sets`: the boolean fields an update sets, `exclusive` when the caller's other records then lose them (a
 *   default);
 * - `none`: no record (the probes).
 * A record no operation writes (the events) is one every write may change.
 */
export type RecordsTouched =
  | "none"
  | { readonly reads: string; readonly item?: string }
  | { readonly lists: string }
  | { readonly creates: string }
  | { readonly merges: string }
  | {
      readonly updates: string
      readonly item: string
      readonly sets?: Readonly<Record<string, boolean>>
      readonly exclusive?: boolean
    }
  | { readonly deletes: string; readonly item: string }

/** The body an implementation is given: the body Schema's decoded type, or undefined when the operation reads none. */
export type BodyOf<B extends BodySpec | undefined> = B extends BodySpec<infer S> ? S["Type"] : undefined

/** The query an implementation is given: its Schema's decoded type, or undefined when the operation reads none. */
export type QueryOf<Q extends Schema.Decoder<unknown> | undefined> =
  Q extends Schema.Decoder<unknown> ? Q["Type"] : undefined

/** The path parameters an implementation is given: their Schema's decoded type, or undefined when the path has none. */
export type ParamsOf<P extends Schema.Decoder<unknown> | undefined> =
  P extends Schema.Decoder<unknown> ? P["Type"] : undefined

/** What a success answers: its Schema's decoded type, or nothing (`void`, as a use case that returns none) for a 204. */
export type SuccessValueOf<O extends { readonly success: SuccessSpec<Schema.Top> }> = O["success"] extends {
  readonly schema: infer S extends Schema.Top
}
  ? S["Type"]
  : void

/** A success's body as sent (its Schema's Encoded side), or undefined for a 204. */
export type SuccessEncodedOf<O extends { readonly success: SuccessSpec<Schema.Top> }> = O["success"] extends {
  readonly schema: infer S extends Schema.Top
}
  ? S["Encoded"]
  : undefined

/**
 * An operation as written in its area's table (operations/*.ts): data only. Its implementation is bound to it by
 * operationId (core's implementation map); its text for people and its examples are its area's `docs` (OperationDocs).
 * `defineOperation` keeps the literal types of what is written (see TypedOperation).
 */
export interface OperationSpec {
  readonly operationId: string
  readonly method: HttpMethod
  /** Relative to the mount prefix, as docs/api.md ("Routes") writes it; `{name}` is a path parameter. */
  readonly path: string
  /** Answered only as written, not also without its trailing slash (docs/api.md, "Routes"); default false. */
  readonly exact?: boolean
  readonly access: Access
  /** The JSON body and the Schema it is decoded with; absent: the operation reads no body. */
  readonly body?: BodySpec
  /** Path parameters and their Schemas, one field per `{name}` of the path. */
  readonly params?: ParamsSchema
  /** Query parameters and their Schemas (a GET's); absent: the query is ignored, as it always was. */
  readonly query?: QuerySchema
  readonly success: SuccessSpec
  /** Its answer also as a stream of items (a GET's second representation); absent: JSON only. */
  readonly stream?: StreamSpec
  /**
   * The domain errors an implementation may fail with (by tag; domain-errors.ts gives each its answer); its problem
   * codes and the OpenAPI errors derive from this list.
   */
  readonly errors: ReadonlyArray<DomainErrorTag>
  /**
   * A readiness probe: answered 503 `unavailable` without running while the host drains (`HttpHandlerOptions`
   * `isDraining`), so it must declare `Unavailable`.
   */
  readonly unavailableWhileDraining?: boolean
  /** Conditional requests (a conditional write declares `PreconditionFailed`: its 412). */
  readonly conditional?: Conditional
  readonly records: RecordsTouched
  /** The operation itself is deprecated (docs/api.md, "Versioning"): its answers say so, the client still calls it. */
  readonly deprecated?: DeprecationSpec
  /**
   * Other paths that answer as this operation, each deprecated, and past its sunset 410 `gone` naming this
   * operation's path (its successor). The client never calls them.
   */
  readonly aliases?: ReadonlyArray<AliasSpec>
}

/** A second path of an operation, kept for callers that use it (docs/api.md, "Versioning"). */
export interface AliasSpec {
  /** Names it in the OpenAPI document (an operationId) and in a server's options. */
  readonly id: string
  /** Relative to the mount prefix, with the operation's `{name}`s. */
  readonly path: string
  /** Defaults: the server may set its dates (e.g. `--alias-sunset`); its successor is the operation's path. */
  readonly deprecation: Omit<DeprecationSpec, "successor">
}

/** An alias as checked (`defineOperation`): its deprecation's successor is its operation's path. */
export interface Alias {
  readonly id: string
  readonly path: string
  readonly deprecation: Deprecation
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
  /** Its Schema undefined for a 204, which has no body. */
  readonly success: SuccessSpec<Schema.Top>
  /** Undefined when the operation answers JSON only. */
  readonly stream: StreamSpec | undefined
  readonly errors: ReadonlyArray<DomainErrorTag>
  /** Answered 503 `unavailable` while the host drains, before anything runs (a readiness probe). */
  readonly unavailableWhileDraining: boolean
  /** Undefined when the operation takes no part in conditional requests. */
  readonly conditional: Conditional | undefined
  readonly records: RecordsTouched
  /** Undefined unless the operation itself is deprecated. */
  readonly deprecation: Deprecation | undefined
  /** Deprecated second paths of the operation; none for most. */
  readonly aliases: ReadonlyArray<Alias>
}

/** What the declaration `S` wrote for an optional field `K`, or undefined when it left it out. */
type Written<S, K extends string> = K extends keyof S ? Exclude<S[K], undefined> : undefined

/**
 * An operation with the static types it was written with (`S`, its declaration): what a typed client derives its
 * methods from (the body Schema's Encoded side is what it sends, the success Schema what it decodes, `ProblemCodeOf`
 * the codes it may be answered) and what an implementation is checked against. The erased `Operation` view of the
 * same object is what the handler and the OpenAPI generator read; without `S`, every operation.
 */
export type TypedOperation<S extends OperationSpec = OperationSpec> = Operation & {
  readonly operationId: S["operationId"]
  readonly method: S["method"]
  readonly path: S["path"]
  readonly access: S["access"]
  readonly body: OperationSpec extends S ? BodySpec | undefined : Written<S, "body">
  readonly params: OperationSpec extends S ? ParamsSchema | undefined : Written<S, "params">
  readonly query: OperationSpec extends S ? QuerySchema | undefined : Written<S, "query">
  readonly success: S["success"]
  readonly stream: OperationSpec extends S ? StreamSpec | undefined : Written<S, "stream">
  readonly errors: S["errors"]
  readonly conditional: OperationSpec extends S ? Conditional | undefined : Written<S, "conditional">
  readonly unavailableWhileDraining: OperationSpec extends S
    ? boolean
    : Written<S, "unavailableWhileDraining"> extends true
      ? true
      : false
  readonly records: S["records"]
}

/** The names of the path parameters a declaration gives. */
type ParamNamesOf<S extends OperationSpec> = S extends { readonly params: { readonly fields: infer F } }
  ? keyof F & string
  : never

/** What a field must be for a declaration to hold: no value is (the reason shows in the compiler's message). */
interface Refused<Why extends string> {
  readonly refused: Why
}

/**
 * What the compiler checks of a declaration beyond its fields' types: each rule broken makes a field's type
 * `Refused`, whose message says why.
 */
type Consistent<S extends OperationSpec> = (S extends { readonly unavailableWhileDraining: true }
  ? "Unavailable" extends S["errors"][number]
    ? unknown
    : { readonly unavailableWhileDraining: Refused<"a probe answered 503 while draining declares Unavailable"> }
  : unknown) &
  (S extends { readonly conditional: "ifNoneMatch" }
    ? S["success"] extends { readonly schema: Schema.Top }
      ? unknown
      : { readonly conditional: Refused<"a conditional read answers a body (its ETag is the body's)"> }
    : unknown) &
  (S["records"] extends { readonly item: infer Item }
    ? Item extends ParamNamesOf<S>
      ? unknown
      : { readonly records: { readonly item: Refused<"the item is named by a path parameter"> } }
    : unknown)

/** Checks an operation's declarations against each other and keeps their static types on the result. */
export const defineOperation = <const S extends OperationSpec>(spec: S & Consistent<S>): TypedOperation<S> => {
  // Absent in the spec means absent in the type too (`Written`), and false for the two flags.
  const operation: Operation = {
    operationId: spec.operationId,
    method: spec.method,
    path: spec.path,
    exact: spec.exact ?? false,
    access: spec.access,
    body: spec.body,
    params: spec.params,
    query: spec.query,
    success: spec.success,
    stream: spec.stream,
    errors: spec.errors,
    unavailableWhileDraining: spec.unavailableWhileDraining ?? false,
    conditional: spec.conditional,
    records: spec.records,
    // Checked here, so that a sunset before its deprecation stops the module from loading (`makeDeprecation`).
    deprecation: spec.deprecated === undefined ? undefined : makeDeprecation(spec.deprecated),
    aliases: (spec.aliases ?? []).map((alias) => aliasOf(spec.path, alias))
  }
  return operation as TypedOperation<S>
}

/** An alias checked, its successor its operation's path; its parameters must be the operation's. */
const aliasOf = (path: string, alias: AliasSpec): Alias => {
  const names = (template: string) => [...template.matchAll(/\{([^}]+)\}/g)].map((match) => match[1]).join()
  if (names(alias.path) !== names(path))
    throw new DeprecationDeclarationError(`the alias ${alias.path} does not have the parameters of ${path}`)
  return { id: alias.id, path: alias.path, deprecation: makeDeprecation({ ...alias.deprecation, successor: path }) }
}

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

/** An operation that answers a body: its example, in wire form (timestamps as strings); none for a 204. */
type SuccessDocs<O extends TypedOperation> = O["success"] extends { readonly schema: Schema.Top }
  ? { readonly successExample: SuccessEncodedOf<O> }
  : { readonly successExample?: never }

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
} & SuccessDocs<O> &
  ParamsDocs<O> &
  QueryDocs<O> &
  BodyDocs<O>

/** An operation's docs as the OpenAPI generator reads them, their static types erased. */
export interface ErasedOperationDocs {
  readonly tag: OperationTag
  readonly summary: string
  readonly description: string
  /** Undefined for a 204. */
  readonly successExample?: unknown
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
