import { isProblemWithCode } from "@accord/contract/routes"
import { methodsOf, type AnswerCheck } from "./request.js"
import type { AccordClientMethods, AccordClientOptions } from "./types.js"

/**
 * The default check of an answer's body, cheap and Schema-free (README, "Checking answers"): a success body is the
 * JSON as sent, a problem must have the contract's problem shape (`isProblemWithCode`, held equal to its
 * ProblemSchema) with one of the operation's codes.
 */
const lightCheck: AnswerCheck = {
  success: (_, body) => ({ ok: true, value: body }),
  problem: (_, body, codes) =>
    isProblemWithCode(body, codes)
      ? { ok: true, value: body }
      : { ok: false, why: "not a problem+json body with one of its codes" }
}

/** A client whose answers `check` judges: what the default entry and the validated one make. */
export const makeClientWith = (options: AccordClientOptions, check: AnswerCheck): AccordClientMethods =>
  // Each method reads its operation's route, whose literal types AccordClientMethods states.
  methodsOf(options, check) as unknown as AccordClientMethods

/**
 * A client for an Accord API: one method per operation of the contract, named by its operationId, taking
 * `{ params?, body?, signal? }` typed from the operation's Schemas and resolving to `{ ok: true, status, value }` or
 * `{ ok: false, status, problem }`. Rejects with `AccordTransportError` when no answer of the API's could be had.
 * It checks answers cheaply and carries no Schema; `@accord/client/validated` decodes them with the Schemas.
 */
export const makeAccordClient = (options: AccordClientOptions): AccordClientMethods =>
  makeClientWith(options, lightCheck)
