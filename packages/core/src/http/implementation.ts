import {
  apiRoutes,
  type Access,
  type BodyOf,
  type Operation,
  type OperationId,
  type Operations,
  type ParamsOf,
  type QueryOf,
  type Route,
  type SuccessValueOf,
  type TypedOperation
} from "@accord/contract"
import type { AccordServices, DomainError, Principal, UserId } from "@accord/domain"
import type { Effect } from "effect"
import { entityTagOfValue, ifMatchHolds, type EntityTagCondition } from "./conditional.js"

/** What an implementation is given about its caller, by the operation's access. */
export type CallerOf<A extends Access> = A extends "public" ? undefined : A extends "user" ? UserId : Principal

/** What an implementation is given besides its caller: the body and path parameters, decoded by the operation's Schemas. */
export interface InputOf<O extends TypedOperation> {
  readonly body: BodyOf<O["body"]>
  readonly params: ParamsOf<O["params"]>
  readonly query: QueryOf<O["query"]>
  /** A conditional write's If-Match (docs/api.md, "Conditional requests"); undefined when none was sent. */
  readonly ifMatch: EntityTagCondition | undefined
}

/**
 * An If-Match as a condition on the record the write starts from: its representation (`toView`, as the handler would
 * answer it) must have a matching strong entity tag. Undefined: unconditional.
 */
export const ifMatchOn = <R>(
  ifMatch: EntityTagCondition | undefined,
  toView: (record: R) => unknown
): ((current: R) => boolean) | undefined =>
  ifMatch === undefined ? undefined : (current) => ifMatchHolds(ifMatch, entityTagOfValue(toView(current)))

/** The domain errors an operation declares (by tag, in the contract), as the domain's tagged errors. */
export type DeclaredErrorOf<O extends TypedOperation> = Extract<DomainError, { readonly _tag: O["errors"][number] }>

/**
 * An operation's implementation, typed from its declaration: its caller and decoded input in; its success Schema's
 * type out (nothing for a 204), or one of its declared errors.
 */
export type Implementation<O extends TypedOperation> = (
  caller: CallerOf<O["access"]>,
  input: InputOf<O>
) => Effect.Effect<SuccessValueOf<O>, DeclaredErrorOf<O>, AccordServices>

/**
 * One implementation per operation of the contract, by operationId: the compiler refuses a missing operation, an
 * unknown one, and an input, output or error that does not match the operation's declaration.
 */
export type Implementations = { readonly [Id in OperationId]: Implementation<Operations[Id]> }

/**
 * An operation of the contract with its implementation, types erased: what the handler routes and runs. The handler
 * calls `run` only after the access check, with values decoded by the operation's own Schemas.
 */
export interface BoundOperation extends Operation {
  readonly run: (
    caller: Principal | undefined,
    input: ErasedInput
  ) => Effect.Effect<unknown, DomainError, AccordServices>
}

/** An implementation's input, its types erased. */
export interface ErasedInput {
  readonly body: unknown
  readonly params: unknown
  readonly query: unknown
  readonly ifMatch: EntityTagCondition | undefined
}

/** An implementation as the handler calls it: the map is typed once, above, and read here by operationId. */
type ErasedImplementation = (
  caller: Principal | UserId | undefined,
  input: ErasedInput
) => Effect.Effect<unknown, DomainError, AccordServices>

const userIdOf = (caller: Principal | undefined): UserId | undefined =>
  caller?._tag === "User" ? caller.userId : undefined

/** Gives the implementation its caller as `CallerOf` the operation's access says. */
const bind = (operation: Operation, implementations: Implementations): BoundOperation => {
  const implementation = (implementations as Readonly<Record<string, ErasedImplementation | undefined>>)[
    operation.operationId
  ]
  if (implementation === undefined) throw new Error(`${operation.operationId} has no implementation`)
  const run: BoundOperation["run"] =
    operation.access === "public"
      ? (_caller, input) => implementation(undefined, input)
      : operation.access === "user"
        ? (caller, input) => implementation(userIdOf(caller), input)
        : implementation
  return { ...operation, run }
}

export type BoundRoutes = ReadonlyArray<Route<BoundOperation>>

/** The contract's routes with every operation bound to its implementation in `implementations`: what a handler compiles. */
export const bindRoutes = (implementations: Implementations): BoundRoutes =>
  apiRoutes.map((route) => ({
    path: route.path,
    exact: route.exact,
    operations: route.operations.map((operation) => bind(operation, implementations))
  }))
