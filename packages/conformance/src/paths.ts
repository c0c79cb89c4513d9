import {
  aliasRoutes,
  allowHeader,
  apiRoutes,
  DOCUMENT_PATHS,
  operations,
  routePattern,
  type OperationId,
  type Operations
} from "@accord/contract"
import { randomBytes } from "node:crypto"

/** The names of an operation's path parameters (`{id}` in its path), never when it has none. */
type ParamNames<Id extends OperationId> = Operations[Id]["params"] extends { readonly fields: infer Fields }
  ? keyof Fields & string
  : never

/** What an operation's path needs besides the prefix: its parameters by name, or nothing. */
export type PathArgs<Id extends OperationId> = [ParamNames<Id>] extends [never]
  ? []
  : [params: { readonly [Name in ParamNames<Id>]: string }]

/** A `{name}` of a path template (the contract's own paths, never a request's). */
const PARAMETER = /\{([A-Za-z0-9_]+)\}/g

/**
 * The path of an operation of the contract under `prefix`, each `{name}` replaced by `params[name]` as given (sent as
 * is: a value that needs it comes percent-encoded, and an audit may send one the parameter refuses).
 */
export const operationPath = (
  prefix: string,
  operationId: OperationId,
  params: Readonly<Record<string, string>> = {}
): string =>
  `${prefix}${operations[operationId].path.replace(PARAMETER, (_, name: string) => {
    const value = params[name]
    if (value === undefined) throw new Error(`${operationId}: no value for the path parameter ${name}`)
    return value
  })}`

/** `Allow` on an operation's path, from the route table: the methods of the operations that share it (docs/api.md, "Routes"). */
export const allowOnPathOf = (operationId: OperationId): string => {
  const { path } = operations[operationId]
  return allowHeader(
    (apiRoutes.find((route) => route.path === path)?.operations ?? [operations[operationId]]).map((o) => o.method)
  )
}

/** Each operation and the pattern of its paths (the contract's `routePattern`: what the router matches). */
const OPERATION_PATTERNS = Object.values(operations).map((operation) => ({
  operation,
  pattern: routePattern(operation.path, operation.exact).pattern
}))

/**
 * The operation of the contract a request names: its method (HEAD for a GET) and its path under `prefix`, the query
 * aside; undefined for any other request (a wrong method, an unknown path, the documents).
 */
export const operationAt = (prefix: string, method: string, path: string): OperationId | undefined => {
  if (!path.startsWith(prefix)) return undefined
  const relative = path.slice(prefix.length).split("?")[0] ?? ""
  return OPERATION_PATTERNS.find(
    ({ operation, pattern }) =>
      (operation.method === method || (operation.method === "GET" && method === "HEAD")) && pattern.test(relative)
  )?.operation.operationId
}

/**
 * The API's paths under a mount prefix (`/api` by default, `""` for the root), taken from the contract's operations:
 * `of(operationId, params)` for any of them, readable names for the ones the audits are about, and the two documents
 * core serves beside the operations (openapi.json and the API reference page, docs/api.md "Routes").
 */
export const apiPaths = (prefix: string) => {
  const of = <Id extends OperationId>(operationId: Id, ...[params]: PathArgs<Id>): string =>
    operationPath(prefix, operationId, params)
  return {
    of,
    planEntries: of("createPublicPlanEntry"),
    preferences: of("updateLanguagePreferences"),
    events: of("listEvents"),
    paymentMethods: of("listPaymentMethods"),
    paymentMethod: (id: string): string => of("setDefaultPaymentMethod", { id }),
    health: of("health"),
    /** The liveness and readiness probes (docs/api.md, "Probes"). */
    live: of("liveness"),
    ready: of("readiness"),
    openapi: `${prefix}${DOCUMENT_PATHS.openapi}`,
    docs: `${prefix}${DOCUMENT_PATHS.docs}`
  }
}

export type ApiPaths = ReturnType<typeof apiPaths>

/**
 * A request path of an operation that has a deprecated alias (docs/api.md, "Versioning"), rewritten to its first
 * alias with the same parameters (as sent) and the same trailing-slash form; undefined for any other path. The query
 * is kept.
 */
export const toAliasPath = (prefix: string, path: string): string | undefined => {
  if (!path.startsWith(prefix)) return undefined
  const [relative = "", query] = path.slice(prefix.length).split(/\?(.*)/s)
  for (const alias of aliasRoutes) {
    const { pattern, params } = routePattern(alias.operation.path, alias.operation.exact)
    const found = pattern.exec(relative)
    if (found === null) continue
    const filled = alias.path.replace(PARAMETER, (_, name: string) => found[params.indexOf(name) + 1] ?? "")
    const form = relative.endsWith("/") ? filled : withoutSlash(filled)
    return `${prefix}${form}${query === undefined ? "" : `?${query}`}`
  }
  return undefined
}

/** The contract's paths under the default mount prefix `/api`. */
export const paths: ApiPaths = apiPaths("/api")

/** The same path without its trailing slash (the contract serves both forms of the operation paths). */
export const withoutSlash = (path: string): string => (path.endsWith("/") ? path.slice(0, -1) : path)

/** Lower-case hex, safe in ids, emails and tokens; makes every run's rows its own on a shared database. */
export const randomSuffix = (bytes = 6): string => randomBytes(bytes).toString("hex")

/** A token in the contract's grammar (`[A-Za-z0-9._~+/-]{1,512}=*`), unique per call. */
export const randomToken = (label: string): string => `${label}.${randomBytes(24).toString("base64url")}`

export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/
export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
