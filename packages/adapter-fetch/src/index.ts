import {
  makeHttpHandler,
  type BodyReadResult,
  type HttpHandlerOptions,
  type HttpRequest,
  type HttpResponse
} from "@accord/core"

// Accord as a WinterCG fetch handler, on WHATWG Request/Response only: no Node API here, so that it runs on Bun, Deno,
// Workers and Next.js as it does on Node (the standalone Node server is `@accord/adapter-fetch/node`).

/** What Bun.serve, Deno.serve, a Worker's `fetch`, Hono and Next.js route handlers call. */
export type FetchHandler = (request: Request) => Promise<Response>

/**
 * The body, at most `limit` bytes: TooLarge as soon as one more arrives (the stream is then cancelled, so that the
 * runtime may drop the rest), Aborted when the stream breaks or was read before (a host's body parser in front).
 */
const readBody = async (request: Request, limit: number): Promise<BodyReadResult> => {
  if (request.bodyUsed || request.body?.locked === true) return { _tag: "Aborted" }
  if (request.body === null) return { _tag: "Read", bytes: new Uint8Array(0) }
  const reader = request.body.getReader()
  const chunks: Array<Uint8Array> = []
  let received = 0
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      received += chunk.value.byteLength
      if (received > limit) {
        // Not awaited: the answer does not wait for the runtime to settle the cancel, whose failure changes nothing.
        reader.cancel().catch(() => undefined)
        return { _tag: "TooLarge" }
      }
      chunks.push(chunk.value)
    }
  } catch {
    return { _tag: "Aborted" }
  } finally {
    reader.releaseLock()
  }
  if (chunks.length === 1 && chunks[0] !== undefined) return { _tag: "Read", bytes: chunks[0] }
  const bytes = new Uint8Array(received)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return { _tag: "Read", bytes }
}

/** The path of a serialised URL: still percent-encoded, without query or fragment (`new URL` would parse it again). */
const pathOf = (url: string): string => /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/.exec(url)?.[1] || "/"

/**
 * The core's neutral request for a fetch Request (docs/api.md, "Precise rules"): header names lower-case and a field
 * sent twice joined by ", " (as fetch's Headers give them), the body read only when the core asks for it. `path`
 * defaults to the URL's path; a server that has the request target as received passes that instead.
 */
export const fromFetchRequest = (request: Request, path: string = pathOf(request.url)): HttpRequest => ({
  method: request.method,
  path,
  headers: Object.fromEntries(request.headers),
  readBody: (limit) => readBody(request, limit)
})

/** The core's answer as a fetch Response: its status, its headers as they are, its body bytes (none: null). */
export const toFetchResponse = (response: HttpResponse): Response =>
  new Response(response.body ?? null, { status: response.status, headers: response.headers })

/**
 * Accord as a fetch handler: `makeFetchHandler({ runtime, prefix: "/api" })`. It answers every request it is given,
 * under the prefix as the contract says and elsewhere with the core's 404 problem, so a host routes only the
 * prefix to it, with the request's full path (docs/api.md, "Routes").
 */
export const makeFetchHandler = (options: HttpHandlerOptions): FetchHandler => {
  const handler = makeHttpHandler(options)
  return async (request) => toFetchResponse(await handler(fromFetchRequest(request)))
}
