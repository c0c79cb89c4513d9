import type { OperationId, ProblemCodeOf, TypedOperation } from "@accord/contract"
import { Context, Effect, Layer } from "effect"
import { AccordProblem, AccordTransportError } from "./errors.js"
import { compiledOperations, send, settingsOf, type AnyRequest, type AnyResult, type Settings } from "./request.js"
import type { AccordClientOptions, Call, OperationOf, RequestInputOf, SuccessOf } from "./types.js"

/**
 * An Effect-flavoured method: the operation's request in (no signal: interrupting the effect aborts the request);
 * the decoded success value out, or an `AccordProblem` whose code is one the operation can be answered with, or an
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

const call = (
  settings: Settings,
  compiled: (typeof compiledOperations)[OperationId],
  request: AnyRequest | undefined
): Effect.Effect<unknown, AccordProblem | AccordTransportError> =>
  Effect.callback((resume, signal) => {
    send(settings, compiled, { ...request, signal }).then(
      // No 304 here: an Effect method sends no If-None-Match (its request type has none).
      (result) =>
        resume(
          !result.ok ? Effect.fail(problemOf(result)) : "value" in result ? Effect.succeed(result.value) : Effect.void
        ),
      // Only AccordTransportError is an expected failure; anything else (a TypeError from untyped code) is a defect.
      (error: unknown) => resume(error instanceof AccordTransportError ? Effect.fail(error) : Effect.die(error))
    )
  })

const effectsOf = (options: AccordClientOptions): AccordClientEffects => {
  const settings = settingsOf(options)
  const methods: Partial<Record<OperationId, (request?: AnyRequest) => Effect.Effect<unknown, unknown>>> = {}
  for (const [id, compiled] of Object.entries(compiledOperations)) {
    methods[id as OperationId] = (request) => call(settings, compiled, request)
  }
  // Each method runs its operation's compiled Schemas, whose static types AccordClientEffects states.
  return methods as AccordClientEffects
}

/**
 * The Effect flavour of the Accord client as a service: `yield* AccordClient` gives one method per operation, each an
 * `Effect<Success, AccordProblem | AccordTransportError>`. Provide it with `AccordClient.layer(options)`.
 */
export class AccordClient extends Context.Service<AccordClient, AccordClientEffects>()("@accord/client/AccordClient") {
  /** The client for `options` (the same as `makeAccordClient`'s) as a layer. */
  static readonly layer = (options: AccordClientOptions): Layer.Layer<AccordClient> =>
    Layer.succeed(AccordClient, effectsOf(options))
}
