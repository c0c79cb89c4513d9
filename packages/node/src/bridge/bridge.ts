import type { IncomingMessage, ServerResponse } from "node:http"
import type { Readable } from "node:stream"
import {
  type HttpHandler,
  type HttpHandlerOptions,
  type HttpRequest,
  type HttpResponse,
  makeHttpHandler
} from "@accord/core"
import { bodyFullyReceived, nodeBodyNow, nodeRequestBodyReader } from "./body-reader.js"

// What both Node adapters do to translate between a framework's request/response and the core's neutral ones.

/**
 * `makeHttpHandler` for Node adapters. The API reference page is served only when `docs` is given (e.g.
 * `loadApiReference()` from `@accord/api-reference`).
 */
export const makeNodeHttpHandler = (options: HttpHandlerOptions): HttpHandler => {
  const handler = makeHttpHandler(options)
  // Started a microtask later, when Node has handed over the rest of the packet that brought the headers: a small
  // body is then already buffered in full and read without waiting (`readBodyNow`).
  return (request) => Promise.resolve(request).then(handler)
}

/** The query of a request target: after its first `?`, up to a `#`, still percent-encoded; "" when there is none. */
export const requestQuery = (target: string): string => {
  const start = target.indexOf("?")
  if (start === -1) return ""
  const fragment = target.indexOf("#")
  if (fragment !== -1 && fragment < start) return ""
  return target.slice(start + 1, fragment === -1 ? undefined : fragment)
}

/**
 * The raw path of a request target: the query (and a stray fragment) cut off, still percent-encoded. An
 * absolute-form target (`GET http://host/api/health HTTP/1.1`, RFC 9112 3.2.2) keeps only its path.
 */
export const requestPath = (target: string): string => {
  const end = target.search(/[?#]/)
  const path = end === -1 ? target : target.slice(0, end)
  if (path.startsWith("/")) return path
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]*/.exec(path)
  return authority === null ? path : path.slice(authority[0].length) || "/"
}

/**
 * The request's headers, with every Authorization field when it came more than once: Node keeps only the first of
 * a repeated Authorization, and the core refuses a repeated one rather than pick (docs/api.md, "Authentication").
 */
const withEveryAuthorization = (request: IncomingMessage): HttpRequest["headers"] => {
  const raw = request.rawHeaders
  let values: Array<string> | undefined
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index] ?? ""
    if (name.length === 13 && name.toLowerCase() === "authorization") (values ??= []).push(raw[index + 1] ?? "")
  }
  return values === undefined || values.length < 2 ? request.headers : { ...request.headers, authorization: values }
}

/** Requests that were sent `100 Continue`. */
const continued = new WeakSet<IncomingMessage>()

/** True for `Expect: 100-continue` (case-insensitive, RFC 9110 10.1.1), the one expectation a server can meet. */
export const expectsContinue = (request: IncomingMessage): boolean =>
  request.headers.expect?.trim().toLowerCase() === "100-continue"

/**
 * Sends `100 Continue` to a request that expects it, once, when its body is first read: the core reads a body only
 * after route, credentials, access, media type and declared size passed, so a refused upload is never invited
 * (docs/SECURITY.md, "100-continue only for a body that will be read"). The standalone servers dispatch such requests
 * at once (`checkContinue`) instead of letting Node send `100 Continue` before any check.
 */
export const continueIfExpected = (request: IncomingMessage, response: ServerResponse | undefined): void => {
  if (response === undefined || continued.has(request) || response.headersSent || !expectsContinue(request)) return
  // A host's own server without a checkContinue listener: Node has sent it already.
  if ((response as ServerResponse & { _sent100?: boolean })._sent100 === true) return
  continued.add(request)
  response.writeContinue()
}

/**
 * The neutral request for a Node request. `body` is the stream to read when the framework hands over a different
 * one (Fastify's payload after the host's preParsing hooks); by default the request itself. `response`, when given,
 * is where `100 Continue` goes the first time the body is read (see `continueIfExpected`).
 */
export const toHttpRequest = (
  request: IncomingMessage,
  body: Readable = request,
  response?: ServerResponse
): HttpRequest => {
  const read = nodeRequestBodyReader(request, body)
  const neutral: HttpRequest = {
    method: request.method ?? "GET",
    path: requestPath(request.url ?? "/"),
    query: requestQuery(request.url ?? "/"),
    headers: withEveryAuthorization(request),
    readBody: (limit) => {
      continueIfExpected(request, response)
      return read(limit)
    },
    readBodyNow: nodeBodyNow(request, body)
  }
  const framedBody = http2FramedBody(request)
  return framedBody === undefined ? neutral : { ...neutral, framedBody }
}

/**
 * For a request of `node:http2`'s compatibility API (a host's `http2.createServer`, `Fastify({ http2: true })`):
 * whether its stream carries a body, i.e. its headers did not end it (RFC 9113, 8.1; docs/SECURITY.md, item 28).
 * Undefined for HTTP/1.x, whose headers say it.
 */
const http2FramedBody = (request: IncomingMessage): boolean | undefined => {
  if (request.httpVersionMajor < 2) return undefined
  const stream: unknown = (request as IncomingMessage & { readonly stream?: unknown }).stream
  const endAfterHeaders =
    typeof stream === "object" && stream !== null && "endAfterHeaders" in stream ? stream.endAfterHeaders : undefined
  return typeof endAfterHeaders === "boolean" ? !endAfterHeaders : undefined
}

/**
 * Call before the response is written. A request whose body did not arrive completely (refused by its declared
 * length, left unread after 401, or cut off at the limit) must not keep its connection: the unread rest would be
 * taken for the next request, or stall it. Node then sends `Connection: close` and closes after the response.
 */
export const closeIfBodyUnread = (request: IncomingMessage, response: ServerResponse): void => {
  if (!bodyFullyReceived(request) && !response.headersSent) response.shouldKeepAlive = false
}

/**
 * The response body as adapters hand it to their framework: text stays text (Node then writes the header block and
 * the body in one write, with no copy into a Buffer first), bytes become a Buffer over the same memory. Neither is
 * serialised again: the core has set Content-Type, so no framework guesses one.
 */
export const responsePayload = (body: HttpResponse["body"]): string | Buffer | undefined =>
  body === undefined || typeof body === "string" ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength)
