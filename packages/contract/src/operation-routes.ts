import type { Schema } from "effect"
import type {
  Access,
  BodySpec,
  Conditional,
  HttpMethod,
  SuccessEncodedOf,
  SuccessValueOf,
  TypedOperation
} from "./operation.js"
import { type OperationId, operations, type Operations } from "./operations.js"
import { problemCodesOf, type ProblemCodeOf } from "./checks.js"
import { PROBLEMS, type ProblemCode, type StatusOf } from "./problems.js"

// What a client needs to call an operation, as plain data apart from the Schemas: the operations' declarations
// (operations/*.ts) and the checks (checks.ts) written out by `npm run generate` into operation-routes.generated.ts,
// which imports nothing at run time. Its type is derived from the typed declarations here, so a stale or hand-edited
// file does not compile, and test/operation-routes.test.ts says when it differs from a fresh generation.

/**
 * Whether the success Schema's decoded type is its JSON (no transformation): a light client hands the JSON over as is.
 * A 204 has no body to hand over.
 */
type SameOnTheWire<O extends TypedOperation> = O["success"] extends { readonly schema: Schema.Top }
  ? [SuccessValueOf<O>] extends [SuccessEncodedOf<O>]
    ? [SuccessEncodedOf<O>] extends [SuccessValueOf<O>]
      ? true
      : false
    : false
  : true

/** One operation as plain data: how to call it and what it can be answered with. */
export interface OperationRoute<O extends TypedOperation> {
  readonly method: O["method"]
  /** Relative to the mount prefix, with `{name}` for a path parameter. */
  readonly path: O["path"]
  /** The names of its path parameters (`{name}` in the path). */
  readonly params: O["params"] extends { readonly fields: infer F } ? ReadonlyArray<keyof F & string> : readonly []
  /** The names of its query parameters. */
  readonly query: O["query"] extends { readonly fields: infer F } ? ReadonlyArray<keyof F & string> : readonly []
  readonly access: O["access"]
  /** Whether it reads a JSON body (required or not). */
  readonly body: [O["body"]] extends [BodySpec] ? true : false
  readonly conditional: O["conditional"]
  /** The success status; a success Schema that transforms its JSON would make the light client lie, so it refuses. */
  readonly success: SameOnTheWire<O> extends true
    ? O["success"]["status"]
    : "the success Schema transforms its JSON: the light client cannot hand that JSON over as its type"
  /** Every problem code it can be answered with (`problemCodesOf`), with the code's status. */
  readonly problems: { readonly [C in ProblemCodeOf<O>]: StatusOf<C> }
}

/** An operation's route as a client reads it at run time, its literal types erased: every OperationRoute is one. */
export interface ErasedOperationRoute {
  readonly method: HttpMethod
  readonly path: string
  readonly params: ReadonlyArray<string>
  readonly query: ReadonlyArray<string>
  readonly access: Access
  readonly body: boolean
  readonly conditional: Conditional | undefined
  readonly success: number
  readonly problems: { readonly [C in ProblemCode]?: number }
}

/** Every operation of the contract as plain data, by operationId. */
export type OperationRoutes = { readonly [Id in OperationId]: OperationRoute<Operations[Id]> }

const GENERATED_HEADER = `// Generated from the operations (src/operations/*.ts) and the checks (src/checks.ts) by \`npm run generate\`: do not
// edit. What a client needs to call each operation, as plain data with no Schema: @accord/client reads it alone.
import type { OperationRoutes } from "./operation-routes.js"
`

const literal = (value: string | number | boolean | undefined): string =>
  value === undefined ? "undefined" : JSON.stringify(value)

/**
 * The source of `operation-routes.generated.ts`: every operation, in the table's order, as an object literal laid out
 * as prettier would lay it out (one field a line), so that the file is stable under `npm run lint`.
 */
export const operationRoutesModule = (): string => {
  const entries = Object.entries(operations).map(([id, operation]) => {
    const params = operation.params === undefined ? [] : Object.keys(operation.params.fields)
    const query = operation.query === undefined ? [] : Object.keys(operation.query.fields)
    const problems = problemCodesOf(operation).map((code) => `      ${code}: ${PROBLEMS[code].status}`)
    return [
      `  ${id}: {`,
      `    method: ${literal(operation.method)},`,
      `    path: ${literal(operation.path)},`,
      `    params: [${params.map(literal).join(", ")}],`,
      `    query: [${query.map(literal).join(", ")}],`,
      `    access: ${literal(operation.access)},`,
      `    body: ${literal(operation.body !== undefined)},`,
      `    conditional: ${literal(operation.conditional)},`,
      `    success: ${literal(operation.success.status)},`,
      `    problems: {`,
      problems.join(",\n"),
      `    }`,
      `  }`
    ].join("\n")
  })
  return `${GENERATED_HEADER}\nexport const OPERATION_ROUTES: OperationRoutes = {\n${entries.join(",\n")}\n}\n`
}
