import type { PROBLEM_CODE_STATUS, ProblemCode } from "@accord/contract"
import { Data } from "effect"
import type { ProblemBody } from "./types.js"

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

/** Why no answer of the API's could be had. */
export type TransportFailure =
  /** `fetch` rejected (connection refused or reset, DNS, CORS, aborted) or the body could not be read. */
  | "network"
  /** The `token` function threw or rejected. */
  | "token"
  /**
   * The answer is not one the operation can give: a status other than its success status with no problem body,
   * a success body its Schema does not decode, or a problem whose code the operation cannot be answered with (e.g.
   * an HTML page from a proxy, or a `baseUrl` that is not an Accord API).
   */
  | "undecodable"

/** No answer of the API's: what the promise flavour rejects with, and the Effect flavour's other failure. */
export class AccordTransportError extends Data.TaggedError("AccordTransportError")<{
  readonly reason: TransportFailure
  readonly message: string
  /** The HTTP status, when a response arrived. */
  readonly status?: number
  readonly cause?: unknown
}> {}
