import { hex48 } from "./hex.js"

/**
 * New request ids (docs/api.md, "Headers on every response": a new one when the request brings none that is usable):
 * UUID-shaped (8-4-4-4-12 lower-case hex, version 4), the first four groups of one random UUID drawn per process and a
 * 48-bit counter as the last. Unique within a process by the counter and across processes by the 74 random bits,
 * without a random UUID per request (one cost about 0.3 us): an id names a request in the logs, it protects nothing.
 * Drawn at the first request, not when the module loads: workerd refuses random values in a module's global scope.
 */
let prefix: string | undefined

const COUNTER_SPAN = 2 ** 48
let counter = 0

export const newRequestId = (): string => {
  if (prefix === undefined) {
    prefix = crypto.randomUUID().slice(0, 24)
    // A random start, so that two processes that drew the same prefix still do not count in step.
    counter = Number.parseInt(crypto.randomUUID().slice(0, 8), 16)
  }
  counter = counter + 1 < COUNTER_SPAN ? counter + 1 : 0
  return prefix + hex48(counter)
}
