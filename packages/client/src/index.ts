// The public surface of @accord/client: a typed client for Accord's API, derived from @accord/contract's operations.
export { makeAccordClient } from "./client.js"
export { AccordClient, type AccordClientEffects, type EffectMethod } from "./effect.js"
export { AccordProblem, AccordTransportError, type TransportFailure } from "./errors.js"
export type {
  AccordClientMethods,
  AccordClientOptions,
  AccordFailure,
  AccordNotModified,
  AccordSuccess,
  ClientMethod,
  ConditionalReadMethod,
  FetchLike,
  OperationOf,
  ProblemBody,
  ProblemStatusOf,
  RequestInputOf,
  RequestOf,
  ResultOf,
  SuccessOf,
  TokenSource
} from "./types.js"
