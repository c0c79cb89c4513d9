import type { OperationId } from "@accord/contract"
import { compiledOperations, send, settingsOf, type AnyRequest } from "./request.js"
import type { AccordClientMethods, AccordClientOptions } from "./types.js"

/**
 * A client for an Accord API: one method per operation of the contract's table, named by its operationId, taking
 * `{ params?, body?, signal? }` typed from the operation's Schemas and resolving to `{ ok: true, status, value }` or
 * `{ ok: false, status, problem }`. Rejects with `AccordTransportError` when no answer of the API's could be had.
 */
export const makeAccordClient = (options: AccordClientOptions): AccordClientMethods => {
  const settings = settingsOf(options)
  const methods: Partial<Record<OperationId, (request?: AnyRequest) => Promise<unknown>>> = {}
  for (const [id, compiled] of Object.entries(compiledOperations)) {
    methods[id as OperationId] = (request) => send(settings, compiled, request)
  }
  // Each method sends with its operation's compiled Schemas, whose static types AccordClientMethods states.
  return methods as AccordClientMethods
}
