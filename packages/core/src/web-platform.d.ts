/**
 * The web-platform globals core uses beyond ECMAScript, declared as narrowly as it uses them. Core compiles without
 * Node's types (`"types": []` in its tsconfig): every runtime it runs on (Node, Bun, Deno, workerd, browsers) has
 * these (the WinterTC Minimum Common API), and nothing outside this list is available to it by accident.
 */

/** `crypto.randomUUID()`: the random part of request ids (request-id.ts). */
declare const crypto: { randomUUID(): string }

/** `performance.now()`: a request's duration in the access log. */
declare const performance: { now(): number }

declare class TextEncoder {
  encode(input?: string): Uint8Array
}

declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean })
  decode(input?: Uint8Array): string
}

/** `new URLSearchParams(query)`: an operation's query parameters, as `application/x-www-form-urlencoded`. */
declare class URLSearchParams implements Iterable<[string, string]> {
  constructor(init?: string)
  [Symbol.iterator](): Iterator<[string, string]>
}

/** Timers: an event stream's heartbeat and its periodic read (event-stream.ts). */
declare function setInterval(handler: () => void, ms: number): unknown
declare function clearInterval(id: unknown): void
