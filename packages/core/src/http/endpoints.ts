import { aliasRoutes, apiRoutes, DOCUMENT_PATHS, makeOpenApiDocument } from "@accord/contract"
import { resultDecoderFor, type DomainError } from "@accord/domain"
import { Effect, type Result } from "effect"
import { routeDeprecation, withAliasDates, type AliasDates, type RouteDeprecation } from "./deprecation.js"
import type { BoundOperation, BoundRoutes } from "./implementation.js"
import { pathParamsDecoderFor } from "./path-params.js"
import type { Problem } from "./problem.js"
import { queryDecoderFor } from "./query.js"
import { compileRouter, type PathMatch } from "./router.js"
import type { DocsAssets, StaticAsset } from "./types.js"

export const JSON_TYPE = "application/json; charset=utf-8"

/** An operation with its decoders, compiled once. */
export interface CompiledOperation {
  readonly operation: BoundOperation
  /** 400 `validation_failed` for a body its Schema refuses. */
  readonly decodeBody: ((input: unknown) => Result.Result<unknown, DomainError>) | undefined
  /** The NotFound its Schema declares for path parameters it refuses (`pathParamsDecoderFor`). */
  readonly decodeParams: ((input: unknown) => Result.Result<unknown, DomainError>) | undefined
  /** 400 `invalid_query` for a query its Schema refuses (`queryDecoderFor`); undefined: the query is ignored. */
  readonly decodeQuery: ((query: string | undefined) => Result.Result<unknown, Problem>) | undefined
  /** The operation's use case: `operation.run` itself, or wrapped in a span named by its id when tracing. */
  readonly run: BoundOperation["run"]
  /** The operation deprecated, or this path of it an alias (docs/api.md, "Versioning"); undefined for most. */
  readonly deprecation: RouteDeprecation | undefined
}

export type Endpoint =
  | { readonly kind: "operation"; readonly compiled: CompiledOperation }
  /** A fixed document (openapi.json, the API reference page and its files); undefined when there is none. */
  | { readonly kind: "file"; readonly file: (params: Readonly<Record<string, string>>) => StaticAsset | undefined }

// Spans made here point at nothing useful in a stack (the handler, not the caller), so none is captured.
export const NO_STACK_TRACE = { captureStackTrace: false } as const

/** The use case's span is named by the operation id (`createPublicPlanEntry`), a child of the server span. */
const compileOperation = (operation: BoundOperation, traced: boolean, prefix: string): CompiledOperation => ({
  operation,
  deprecation:
    operation.deprecation === undefined
      ? undefined
      : routeDeprecation(prefix, operation.operationId, operation.deprecation),
  decodeBody: operation.body === undefined ? undefined : resultDecoderFor(operation.body.schema),
  decodeParams: operation.params === undefined ? undefined : pathParamsDecoderFor(operation.params),
  decodeQuery: operation.query === undefined ? undefined : queryDecoderFor(operation.query),
  run: traced
    ? (caller, input) => Effect.withSpan(operation.run(caller, input), operation.operationId, NO_STACK_TRACE)
    : operation.run
})

export interface Endpoints {
  /** The route a path matches (under the prefix; both slash forms unless exact), or undefined: a 404. */
  readonly match: (path: string) => PathMatch<Endpoint> | undefined
  /** The literal segments of the route table and the prefix, which a logged path keeps (`loggedPath`). */
  readonly knownSegments: ReadonlySet<string>
}

/**
 * The route table compiled for one handler: the operations bound to their implementations (`bindRoutes`), the
 * OpenAPI document and the API reference's files, under `prefix` (already without its trailing slash).
 */
export const compileEndpoints = (
  prefix: string,
  routes: BoundRoutes,
  docs: DocsAssets,
  traced: boolean,
  aliasDates?: AliasDates
): Endpoints => {
  let openApi: StaticAsset | undefined
  const openApiDocument = (): StaticAsset =>
    (openApi ??= {
      contentType: JSON_TYPE,
      body: new TextEncoder().encode(JSON.stringify(makeOpenApiDocument({ serverUrl: prefix })))
    })
  const fileEndpoint = (file: (params: Readonly<Record<string, string>>) => StaticAsset | undefined) =>
    new Map<string, Endpoint>([["GET", { kind: "file", file }]])
  const compiled = new Map(
    routes.flatMap((api) =>
      api.operations.map((operation) => [operation.operationId, compileOperation(operation, traced, prefix)] as const)
    )
  )
  // An alias runs its operation's compiled form, with its own deprecation (the host's dates, if it gave some).
  const aliases = aliasRoutes.flatMap((alias) => {
    const target = compiled.get(alias.operation.operationId)
    if (target === undefined) return []
    const deprecation = withAliasDates(alias.deprecation, aliasDates)
    const endpoint: Endpoint = {
      kind: "operation",
      compiled: { ...target, deprecation: routeDeprecation(prefix, alias.operation.operationId, deprecation) }
    }
    return [
      { path: alias.path, exact: alias.operation.exact, endpoints: new Map([[alias.operation.method, endpoint]]) }
    ]
  })
  const match = compileRouter<Endpoint>(prefix, [
    ...routes.map((api) => ({
      path: api.path,
      exact: api.exact,
      endpoints: new Map(
        api.operations.map((operation): [string, Endpoint] => [
          operation.method,
          {
            kind: "operation",
            compiled: compiled.get(operation.operationId) ?? compileOperation(operation, traced, prefix)
          }
        ])
      )
    })),
    ...aliases,
    { path: DOCUMENT_PATHS.openapi, exact: true, endpoints: fileEndpoint(openApiDocument) },
    { path: DOCUMENT_PATHS.docs, exact: true, endpoints: fileEndpoint(() => docs.get("index.html")) },
    { path: DOCUMENT_PATHS.docsFile, exact: true, endpoints: fileEndpoint(({ asset = "" }) => docs.get(asset)) }
  ])
  return {
    match,
    knownSegments: new Set(
      [
        prefix,
        ...apiRoutes.map((api) => api.path),
        ...aliasRoutes.map((alias) => alias.path),
        DOCUMENT_PATHS.openapi,
        DOCUMENT_PATHS.docs
      ].flatMap((path) => path.split("/"))
    )
  }
}
