import type { Operation, Route } from "./operation.js"
import { operations } from "./operations.js"

/** Paths answered only as written, not also without their trailing slash (docs/api.md, "Routes"). */
const EXACT_PATHS: ReadonlySet<string> = new Set(["/health", "/health/live", "/health/ready"])

/** One route per path, in the order its first operation appears, holding that path's operations in table order. */
const routesOf = (table: Readonly<Record<string, Operation>>): ReadonlyArray<Route> => {
  const byPath = new Map<string, Array<Operation>>()
  for (const operation of Object.values(table)) {
    const onPath = byPath.get(operation.path)
    if (onPath === undefined) byPath.set(operation.path, [operation])
    else onPath.push(operation)
  }
  return [...byPath].map(([path, onPath]) => ({ path, exact: EXACT_PATHS.has(path), operations: onPath }))
}

/** The route table of Accord's API, grouped by path: what the handler routes and the OpenAPI document lists. */
export const apiRoutes: ReadonlyArray<Route> = routesOf(operations)
