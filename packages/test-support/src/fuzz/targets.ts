import type { SeedInput } from "@accord/domain"
import {
  allowHeader,
  apiRoutes,
  DOCUMENT_PATHS,
  OPERATION_DOCS,
  operations,
  routePattern,
  type ErasedOperationDocs,
  type OperationId,
  type TypedOperation
} from "@accord/contract"
import { Schema, SchemaAST } from "effect"

/**
 * What the fuzz aims at, read from the contract: its routes (`apiRoutes`) with their operations, each operation's body
 * fields and examples, and the documents core serves beside them; and what a request's path names under the contract
 * (`targetOf`), which the generators never label by hand: the oracle finds it as the router does.
 */

/** An operation of the contract, with its id as the contract types it and its Schemas' types. */
export type ContractOperation = TypedOperation & { readonly operationId: OperationId }

export const CONTRACT_OPERATIONS: ReadonlyArray<ContractOperation> = Object.values(operations)

/** The mount prefix the fuzz's servers use (core's default). */
export const PREFIX = "/api"

/** The path limit the fuzz's servers use (core's default): a longer path is 414. */
export const MAX_PATH_LENGTH = 2048

/** The body limit the fuzz's servers use (core's default): a longer body is 413. */
export const BODY_LIMIT = 16_384

/** A route of the contract: one path, its operations, and the `Allow` its answers carry. */
export interface FuzzRoute {
  /** Relative to the prefix, with `{name}` for a path parameter. */
  readonly path: string
  readonly exact: boolean
  readonly operations: ReadonlyArray<ContractOperation>
  readonly allow: string
}

export const ROUTES: ReadonlyArray<FuzzRoute> = apiRoutes.map((route) => ({
  path: route.path,
  exact: route.exact,
  operations: CONTRACT_OPERATIONS.filter((operation) => route.operations.includes(operation)),
  allow: allowHeader(route.operations.map((operation) => operation.method))
}))

/**
 * The documents core serves beside the operations (docs/api.md, "Routes"), each exact and read by GET alone: the
 * OpenAPI document, the API reference page and its files (the fuzz's servers serve the page).
 */
export const DOCUMENTS = [
  { name: "openapi", path: DOCUMENT_PATHS.openapi },
  { name: "docs", path: DOCUMENT_PATHS.docs },
  { name: "docs_file", path: DOCUMENT_PATHS.docsFile }
] as const

export type DocumentName = (typeof DOCUMENTS)[number]["name"]

export const DOCUMENT_ALLOW = allowHeader(["GET"])

/** The API reference's files the fuzz asks for that exist, with their media type; any other name is 404. */
export const DOCS_FILES: Readonly<Record<string, string>> = { "init.js": "text/javascript; charset=utf-8" }

/** What a request's path names under the contract. */
export type Target =
  /** Longer than the limit: 414, before any route. */
  | { readonly kind: "too_long" }
  /** No route: 404. */
  | { readonly kind: "none" }
  /** A route of the contract; `params` percent-decoded as the router decodes them. */
  | { readonly kind: "route"; readonly route: FuzzRoute; readonly params: Readonly<Record<string, string>> }
  | { readonly kind: "document"; readonly name: DocumentName; readonly asset: string | undefined }

interface Matcher {
  readonly pattern: RegExp
  readonly params: ReadonlyArray<string>
  readonly target: (params: Readonly<Record<string, string>>) => Target
}

/** A path template as the router matches it (the contract's `routePattern`), and what it names. */
const matcherOf = (path: string, exact: boolean, target: Matcher["target"]): Matcher => ({
  ...routePattern(path, exact),
  target
})

// Paths without parameters first, as the router looks them up before it tries the others.
const MATCHERS: ReadonlyArray<Matcher> = [
  ...ROUTES.map((route) => matcherOf(route.path, route.exact, (params) => ({ kind: "route", route, params }))),
  ...DOCUMENTS.map(({ name, path }) =>
    matcherOf(path, true, (params) => ({ kind: "document", name, asset: params["asset"] }))
  )
].sort((x, y) => Number(x.params.length > 0) - Number(y.params.length > 0))

const decodedSegment = (segment: string): string => {
  try {
    return decodeURIComponent(segment)
  } catch {
    // A malformed escape still names the route; the parameter's Schema judges the value as sent.
    return segment
  }
}

/** The path a server routes: the request target without its query or a stray fragment, still percent-encoded. */
export const routedPath = (target: string): string => {
  const end = target.search(/[?#]/)
  return end === -1 ? target : target.slice(0, end)
}

/** A request target's query: after the first `?`, up to a `#`; undefined when there is none. */
export const rawQuery = (target: string): string | undefined => {
  const start = target.indexOf("?")
  if (start === -1) return undefined
  const fragment = target.indexOf("#")
  if (fragment !== -1 && fragment < start) return undefined
  return target.slice(start + 1, fragment === -1 ? undefined : fragment)
}

/** What `path` (a request target as sent) names: the path limit first, then the routes under the prefix. */
export const targetOf = (path: string): Target => {
  const routed = routedPath(path)
  if (routed.length > MAX_PATH_LENGTH) return { kind: "too_long" }
  if (!routed.startsWith(PREFIX) || (routed.length > PREFIX.length && routed[PREFIX.length] !== "/"))
    return { kind: "none" }
  const relative = routed.slice(PREFIX.length)
  for (const matcher of MATCHERS) {
    const found = matcher.pattern.exec(relative)
    if (found === null) continue
    return matcher.target(
      Object.fromEntries(matcher.params.map((name, index) => [name, decodedSegment(found[index + 1] ?? "")]))
    )
  }
  return { kind: "none" }
}

/** The operation a method names on a route (HEAD is GET's), or undefined: the route does not serve it. */
export const operationOn = (route: FuzzRoute, method: string): ContractOperation | undefined => {
  const named = method === "HEAD" ? "GET" : method
  return route.operations.find((operation) => operation.method === named)
}

export const docsOf = (operation: ContractOperation): ErasedOperationDocs => OPERATION_DOCS[operation.operationId]

export const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The field names of a body Schema (a Struct's keys, as sent), in the Struct's order; none for any other Schema. */
export const fieldsOf = (schema: Schema.Top): ReadonlyArray<string> =>
  SchemaAST.isObjects(schema.ast) ? schema.ast.propertySignatures.map((field) => String(field.name)) : []

/**
 * The body fields whose values are secrets: `writeOnly` in the body's JSON Schema (what the OpenAPI document says of a
 * password), so never in a response (docs/SECURITY.md, item 3).
 */
export const secretFieldsOf = (schema: Schema.Top): ReadonlyArray<string> => flaggedFieldsOf(schema, "writeOnly")

/**
 * The body fields its JSON Schema flags `writeOnly` (a secret: never in a response) or `readOnly` (the server's: sent
 * back as read, and ignored).
 */
export const flaggedFieldsOf = (schema: Schema.Top, flag: "readOnly" | "writeOnly"): ReadonlyArray<string> => {
  const document = Schema.toJsonSchemaDocument(schema)
  const resolve = (node: unknown): unknown => {
    const ref = isRecord(node) ? node["$ref"] : undefined
    return typeof ref === "string" ? resolve(document.definitions[ref.slice(ref.lastIndexOf("/") + 1)]) : node
  }
  const root = resolve(document.schema)
  const properties = isRecord(root) && isRecord(root["properties"]) ? root["properties"] : {}
  return Object.entries(properties).flatMap(([name, property]) => {
    const resolved = resolve(property)
    return isRecord(resolved) && resolved[flag] === true ? [name] : []
  })
}

/**
 * The ids of the seed's records that belong to `userId`: in the seed's list named `record` (an operation's record, as
 * its `records` names it), or in every list whose entries name a `user_id`.
 */
export const idsOwnedBy = (seed: SeedInput, userId: string, record?: string): ReadonlyArray<string> =>
  Object.entries(seed)
    .filter(([name]) => record === undefined || name === record)
    .flatMap(([, records]: readonly [string, ReadonlyArray<unknown>]) =>
      records.flatMap((entry) =>
        isRecord(entry) && entry["user_id"] === userId && typeof entry["id"] === "string" ? [entry["id"]] : []
      )
    )

/**
 * A user's reads: every operation that reads or lists the records of a user's credential (its `records`) with no path
 * parameter. What they answer is the user's stored data as the API shows it, which only a successful write may change.
 */
export const USER_READS: ReadonlyArray<ContractOperation> = CONTRACT_OPERATIONS.filter(
  (operation) =>
    operation.access === "user" &&
    operation.params === undefined &&
    operation.records !== "none" &&
    ("reads" in operation.records || "lists" in operation.records)
)
