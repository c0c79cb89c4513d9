import type { OperationId, PROBLEM_CODE_STATUS, ProblemCode, ProblemCodeOf, TypedOperation } from "@accord/contract"
import { Context, Data, Effect, Layer } from "effect"
import { makeAccordClient } from "./client.js"
import { AccordTransportError } from "./errors.js"
import type { AnyMethod, AnyRequest, AnyResult } from "./request.js"
import type {
  AccordClientMethods,
  AccordClientOptions,
  Call,
  OperationOf,
  ProblemBody,
  RequestInputOf,
  SuccessOf
} from "./types.js"

// @accord/client/effect: the Effect flavour, an entry of its own so that the promise client carries nothing of effect
// (README, "Bundle size"). It wraps a promise client: the default one, or any other (`AccordClient.layerFrom`).
export * from "./index.js"

/**
 * The server answered with a problem (docs/api.md, "Errors"): the Effect flavour's typed failure. `problem.code` is
 * one of the codes the operation can be answered with.
 */
export class AccordProblem<C extends ProblemCode = ProblemCode> extends Data.TaggedError("AccordProblem")<{
  // Inline, not ProblemStatusOf: it hovers as the statuses (types.ts, "Hover text").
  readonly status: { [S in C]: (typeof PROBLEM_CODE_STATUS)[S] }[C]
  readonly problem: ProblemBody<C>
  readonly message: string
}> {}

/**
 * An Effect-flavoured method: the operation's request in (no signal: interrupting the effect aborts the request);
 * the success value out, or an `AccordProblem` whose code is one the operation can be answered with, or an
 * `AccordTransportError` when no answer of the API's could be had.
 */
export type EffectMethod<O extends TypedOperation> = Call<
  RequestInputOf<O>,
  // The codes inline, so that they hover as literals (types.ts, "Hover text").
  Effect.Effect<SuccessOf<O>, AccordProblem<{ [C in ProblemCodeOf<O>]: C }[ProblemCodeOf<O>]> | AccordTransportError>
>

/** The Effect flavour of the client: one method per operation, named by its operationId. */
export type AccordClientEffects = { readonly [Id in OperationId]: EffectMethod<OperationOf<Id>> }

const problemOf = (result: Extract<AnyResult, { readonly ok: false }>): AccordProblem =>
  new AccordProblem({
    status: result.status,
    problem: result.problem,
    message: `${result.status} ${result.problem.code}: ${result.problem.detail}`
  })

const effectOf =
  (method: AnyMethod) =>
  (request: AnyRequest | undefined): Effect.Effect<unknown, AccordProblem | AccordTransportError> =>
    Effect.callback((resume, signal) => {
      method({ ...request, signal }).then(
        // No 304 here: an Effect method sends no If-None-Match (its request type has none).
        (result) =>
          resume(
            !result.ok ? Effect.fail(problemOf(result)) : "value" in result ? Effect.succeed(result.value) : Effect.void
          ),
        // Only AccordTransportError is an expected failure; anything else (a TypeError from untyped code) is a defect.
        (error: unknown) => resume(error instanceof AccordTransportError ? Effect.fail(error) : Effect.die(error))
      )
    })

const effectsOf = (client: AccordClientMethods): AccordClientEffects => {
  // At run time every method of a client takes an AnyRequest and resolves to an AnyResult (request.ts).
  const methods = client as unknown as Readonly<Record<OperationId, AnyMethod>>
  const effects: Partial<Record<OperationId, ReturnType<typeof effectOf>>> = {}
  for (const id of Object.keys(methods) as ReadonlyArray<OperationId>) effects[id] = effectOf(methods[id])
  // Each effect wraps its operation's method, whose static types AccordClientEffects states.
  return effects as unknown as AccordClientEffects
}

/**
 * The Effect flavour of the Accord client as a service: `yield* AccordClient` gives one method per operation, each an
 * `Effect<Success, AccordProblem | AccordTransportError>`. Provide it with `AccordClient.layer(options)`.
 */
export class AccordClient extends Context.Service<AccordClient, AccordClientEffects>()("@accord/client/AccordClient") {
  /** The client for `options` (the same as `makeAccordClient`'s) as a layer. */
  static readonly layer = (options: AccordClientOptions): Layer.Layer<AccordClient> =>
    AccordClient.layerFrom(makeAccordClient(options))

  /**
   * A promise client as the Effect flavour: e.g. `makeAccordClient(options)` from `@accord/client/validated`, which
   * decodes every answer with the contract's Schemas.
   */
  static readonly layerFrom = (client: AccordClientMethods): Layer.Layer<AccordClient> =>
    Layer.succeed(AccordClient, effectsOf(client))
}
