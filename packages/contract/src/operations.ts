import type { Alias, Operation, Route } from "./operation.js"
import { paymentOperations } from "./operations/payments.js"
import { planOperations } from "./operations/plans.js"
import { serviceOperations } from "./operations/service.js"
import { userOperations } from "./operations/users.js"

/**
 * Accord's operations by operationId, with the static types of their Schemas, gathered from their areas
 * (operations/*.ts, one entry each: route, access, Schemas, errors, and beside it its docs and examples): the single
 * source of routing, access, decoding, errors, the OpenAPI document and `@accord/client`. Core's implementation map
 * gives each operation its use case, by the same keys. Its order is the route table's and the document's.
 */
export const operations = { ...planOperations, ...userOperations, ...paymentOperations, ...serviceOperations }

export type Operations = typeof operations
export type OperationId = keyof Operations

/** One route per path, in the order its first operation appears, holding that path's operations in table order. */
const routesOf = (table: Readonly<Record<string, Operation>>): ReadonlyArray<Route> => {
  const byPath = new Map<string, Array<Operation>>()
  for (const operation of Object.values(table)) {
    const onPath = byPath.get(operation.path)
    if (onPath === undefined) byPath.set(operation.path, [operation])
    else onPath.push(operation)
  }
  return [...byPath].map(([path, onPath]) => ({ path, exact: onPath.some((o) => o.exact), operations: onPath }))
}

/** The route table of Accord's API, grouped by path: what the handler routes and the OpenAPI document lists. */
export const apiRoutes: ReadonlyArray<Route> = routesOf(operations)

/** A deprecated second path of an operation (`aliases` in its entry): routed to the same operation. */
export interface AliasRoute extends Alias {
  readonly operation: Operation
}

/**
 * Every alias of every operation (docs/api.md, "Versioning"), in table order: the handler routes each beside the
 * route table, the OpenAPI document lists each as deprecated. Kept out of `apiRoutes`, whose paths the client calls.
 */
export const aliasRoutes: ReadonlyArray<AliasRoute> = Object.values(
  operations as Readonly<Record<string, Operation>>
).flatMap((operation) => operation.aliases.map((alias) => ({ ...alias, operation })))

/**
 * The documents core serves beside the operations (docs/api.md, "Routes"), each exact and read by GET (and HEAD)
 * alone: the OpenAPI document, the API reference page, and its files (`{asset}`).
 */
export const DOCUMENT_PATHS = { openapi: "/openapi.json", docs: "/docs", docsFile: "/docs/{asset}" } as const
