// The public surface of @accord/client: a typed client for Accord's API, derived from @accord/contract's operations.
// This entry carries no Schema and nothing of effect at run time (README, "Bundle size"): the Schema-checked client is
// @accord/client/validated, the Effect flavour @accord/client/effect.
export { makeAccordClient } from "./client.js"
export { AccordTransportError, type TransportFailure } from "./errors.js"
export type {
  AccordClientMethods,
  AccordClientOptions,
  AccordFailure,
  AccordNotModified,
  AccordSuccess,
  ClientMethod,
  DeprecationNoticeOf,
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
