import {
  type OperationId,
  operations,
  problemCodesOf,
  type ProblemCode,
  ProblemSchema,
  type ProblemWithCode,
  type TypedOperation
} from "@accord/contract"
import { Result, Schema } from "effect"
import { makeClientWith } from "./client.js"
import type { AnswerCheck, Judged } from "./request.js"
import type { AccordClientMethods, AccordClientOptions } from "./types.js"

// @accord/client/validated: the same client as @accord/client, every answer decoded with the contract's Schemas
// (README, "Checking answers"); it weighs what effect's Schema weighs (README, "Bundle size").
export * from "./index.js"

/** An operation's decoders, built once when this module loads. */
interface Decoders {
  readonly success: (input: unknown) => Result.Result<unknown, Schema.SchemaError>
  readonly problem: (input: unknown) => Result.Result<ProblemWithCode<ProblemCode>, Schema.SchemaError>
}

/** A 204's body, never judged (the light check and this one read none). */
const NO_BODY = (input: unknown): Result.Result<unknown, Schema.SchemaError> => Result.succeed(input)

const decodersOf = (operation: TypedOperation): Decoders => ({
  success: operation.success.schema === undefined ? NO_BODY : Schema.decodeUnknownResult(operation.success.schema),
  // The contract's ProblemSchema with `code` narrowed to the codes this operation can be answered with (problemCodesOf).
  problem: Schema.decodeUnknownResult(
    ProblemSchema.mapFields((fields) => ({ ...fields, code: Schema.Literals(problemCodesOf(operation)) }))
  )
})

const DECODERS = Object.fromEntries(
  Object.entries(operations).map(([id, operation]) => [id, decodersOf(operation)])
) as Readonly<Record<OperationId, Decoders>>

const judged = <A>(result: Result.Result<A, Schema.SchemaError>): Judged<A> =>
  Result.isSuccess(result)
    ? { ok: true, value: result.success }
    : { ok: false, why: result.failure.message, cause: result.failure }

const schemaCheck: AnswerCheck = {
  success: (id, body) => judged(DECODERS[id].success(body)),
  problem: (id, body) => judged(DECODERS[id].problem(body))
}

/**
 * The same client as `@accord/client`'s `makeAccordClient`, each success decoded with its operation's success Schema
 * (fields it does not name dropped) and each problem with the contract's ProblemSchema, its `code` narrowed to the
 * operation's codes.
 */
export const makeAccordClient = (options: AccordClientOptions): AccordClientMethods =>
  makeClientWith(options, schemaCheck)
