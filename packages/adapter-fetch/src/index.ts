import {
  type HttpHandlerOptions,
  type HttpRequest,
  type HttpResponse,
  makeHttpHandler,
  type StreamedBody
} from "@accord/core"
import { readFetchBody } from "./read-body.js"

// Accord as a WinterCG fetch handler, on WHATWG Request/Response only: no Node API here, so that it runs on Bun, Deno,
// Workers and Next.js as it does on Node (the standalone Node server is `@accord/adapter-fetch/node`).

/** What Bun.serve, Deno.serve, a Worker's `fetch`, Hono and Next.js route handlers call. */
export type FetchHandler = (request: Request) => Promise<Response>

/** The path of a serialised URL: still percent-encoded, without query or fragment (`new URL` would parse it again). */
const pathOf = (url: string): string => /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*([^?#]*)/.exec(url)?.[1] || "/"
/** The URL's query, still percent-encoded: after its `?`, up to a `#` (a Request's URL has no fragment). */
const queryOf = (url: string): string => /^[^?#]*\?([^#]*)/.exec(url)?.[1] ?? ""

/**
 * The core's neutral request for a fetch Request (docs/api.md, "Precise rules"): the request's own `Headers`, which
 * the core asks only for the fields it reads (names lower-case, a field sent twice joined by ", "), and the body read
 * only when the core asks for it. `path` defaults to the URL's path; a server that has the request target as
 * received passes that instead.
 */
export const fromFetchRequest = (request: Request, path: string = pathOf(request.url)): HttpRequest => ({
  method: request.method,
  path,
  query: queryOf(request.url),
  headers: request.headers,
  readBody: (limit) => readFetchBody(request, limit)
})

const utf8 = new TextEncoder()

/**
 * A streamed answer (an event stream, docs/api.md "Events") as a fetch Response over a ReadableStream: each chunk
 * enqueued as it comes (the runtimes send each at once), closed when the stream ends, the stream stopped when the
 * client cancels it or leaves more than `maxUnsentBytes` queued.
 */
const toFetchStream = (response: HttpResponse, stream: StreamedBody): Response => {
  let stop: (() => void) | undefined
  let done = false
  // Set when the queue overflowed, maybe while `start` still runs (before its stop is known).
  let overflowed = false
  const body = new ReadableStream<Uint8Array>(
    {
      start: (controller) => {
        stop = stream.start(
          (chunk) => {
            if (done) return
            controller.enqueue(utf8.encode(chunk))
            // A client that does not read: the queue would hold every later chunk. Erroring it closes the answer.
            if ((controller.desiredSize ?? 0) < 0) {
              done = true
              overflowed = true
              stop?.()
              controller.error(new Error("the client left too much of the event stream unread"))
            }
          },
          () => {
            if (done) return
            done = true
            controller.close()
          }
        )
        if (overflowed) stop()
      },
      cancel: () => {
        if (done) return
        done = true
        stop?.()
      }
    },
    new ByteLengthQueuingStrategy({ highWaterMark: stream.maxUnsentBytes })
  )
  return new Response(body, { status: response.status, headers: response.headers })
}

/**
 * workerd's own `ResponseInit` member: with a `Content-Encoding` header and without `encodeBody: "manual"`, Workers
 * compress the body themselves, so a precompressed docs file would go out compressed twice. Other runtimes ignore it.
 */
interface WorkerdResponseInit extends ResponseInit {
  readonly encodeBody?: "automatic" | "manual"
}

/**
 * The core's answer as a fetch Response: its status, its headers as they are, its body bytes (none: null), already
 * in the coding its `Content-Encoding` names (docs/api.md, "The docs page's files").
 */
export const toFetchResponse = (response: HttpResponse): Response => {
  if (response.stream !== undefined) return toFetchStream(response, response.stream)
  const init: WorkerdResponseInit =
    response.headers["content-encoding"] === undefined
      ? { status: response.status, headers: response.headers }
      : { status: response.status, headers: response.headers, encodeBody: "manual" }
  return new Response(response.body ?? null, init)
}

/**
 * Accord as a fetch handler: `makeFetchHandler({ runtime, prefix: "/api" })`. It answers every request it is given,
 * under the prefix as the contract says and elsewhere with the core's 404 problem, so a host routes only the
 * prefix to it, with the request's full path (docs/api.md, "Routes").
 */
export const makeFetchHandler = (options: HttpHandlerOptions): FetchHandler => {
  const handler = makeHttpHandler(options)
  return (request) => handler(fromFetchRequest(request)).then(toFetchResponse)
}
