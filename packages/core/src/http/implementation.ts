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
  type StreamSpec,
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

/** The operations that have a streamed representation (`stream` in their declaration). */
export type StreamingOperationId = {
  [Id in OperationId]: Operations[Id]["stream"] extends StreamSpec ? Id : never
}[OperationId]

/** One item of a stream: its id (the cursor a client resumes after) and its value, of the stream's Schema. */
export interface StreamedItem<A = unknown> {
  readonly id: string
  readonly item: A
}

/**
 * What an operation's stream reads (docs/api.md, "Events"): a page of its items after a resume point (`after`, an
 * item's id; undefined: from the first), failing with the operation's declared errors (an unknown cursor); and
 * wake-ups when new items may exist (the returned function ends the subscription).
 */
export interface StreamImplementation<O extends TypedOperation> {
  readonly page: (
    caller: CallerOf<O["access"]>,
    after: string | undefined,
    limit: number
  ) => Effect.Effect<
    ReadonlyArray<StreamedItem<O["stream"] extends StreamSpec<infer S> ? S["Type"] : never>>,
    DeclaredErrorOf<O>,
    AccordServices
  >
  readonly subscribe: (
    caller: CallerOf<O["access"]>,
    wake: () => void
  ) => Effect.Effect<() => void, never, AccordServices>
}

/** One stream implementation per operation that streams, by operationId, or it does not compile. */
export type StreamImplementations = {
  readonly [Id in StreamingOperationId]: StreamImplementation<Operations[Id]>
}

/** A stream implementation as the handler calls it, its types erased. */
export interface ErasedStream {
  readonly page: (
    caller: Principal | undefined,
    after: string | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<StreamedItem>, DomainError, AccordServices>
  readonly subscribe: (
    caller: Principal | undefined,
    wake: () => void
  ) => Effect.Effect<() => void, never, AccordServices>
}

/**
 * An operation of the contract with its implementation, types erased: what the handler routes and runs. The handler
 * calls `run` only after the access check, with values decoded by the operation's own Schemas.
 */
export interface BoundOperation extends Operation {
  readonly run: (
    caller: Principal | undefined,
    input: ErasedInput
  ) => Effect.Effect<unknown, DomainError, AccordServices>
  /** Its stream's implementation, when the operation has a streamed representation. */
  readonly streamed: ErasedStream | undefined
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

/** The caller an implementation is given, as the operation's access says. */
const callerFor = (operation: Operation) =>
  operation.access === "public"
    ? () => undefined
    : operation.access === "user"
      ? userIdOf
      : (caller: Principal | undefined) => caller

type ErasedStreamImplementation = {
  readonly page: (
    caller: Principal | UserId | undefined,
    after: string | undefined,
    limit: number
  ) => Effect.Effect<ReadonlyArray<StreamedItem>, DomainError, AccordServices>
  readonly subscribe: (
    caller: Principal | UserId | undefined,
    wake: () => void
  ) => Effect.Effect<() => void, never, AccordServices>
}

/** Gives the implementation its caller as `CallerOf` the operation's access says. */
const bind = (
  operation: Operation,
  implementations: Implementations,
  streams: StreamImplementations
): BoundOperation => {
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
  if (operation.stream === undefined) return { ...operation, run, streamed: undefined }
  const stream = (streams as Readonly<Record<string, ErasedStreamImplementation | undefined>>)[operation.operationId]
  if (stream === undefined) throw new Error(`${operation.operationId} has no stream implementation`)
  const callerOf = callerFor(operation)
  const streamed: ErasedStream = {
    page: (caller, after, limit) => stream.page(callerOf(caller), after, limit),
    subscribe: (caller, wake) => stream.subscribe(callerOf(caller), wake)
  }
  return { ...operation, run, streamed }
}

export type BoundRoutes = ReadonlyArray<Route<BoundOperation>>

/** The contract's routes with every operation bound to its implementation in `implementations`: what a handler compiles. */
export const bindRoutes = (implementations: Implementations, streams: StreamImplementations): BoundRoutes =>
  apiRoutes.map((route) => ({
    path: route.path,
    exact: route.exact,
    operations: route.operations.map((operation) => bind(operation, implementations, streams))
  }))
