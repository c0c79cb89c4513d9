import type { IncomingMessage, ServerResponse } from "node:http"
import type { Readable } from "node:stream"
import {
  type BodyReadResult,
  type EagerHttpHandler,
  type HttpHandler,
  type HttpHandlerOptions,
  type HttpRequest,
  type HttpResponse,
  makeEagerHttpHandler,
  type StreamedBody,
  makeHttpHandler
} from "@accord/core"
import { bodyFullyReceived, nodeRequestBodyReader, takeBodyNow } from "./body-reader.js"

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
  let end = target.indexOf("?")
  const fragment = target.indexOf("#")
  if (fragment !== -1 && (end === -1 || fragment < end)) end = fragment
  const path = end === -1 ? target : target.slice(0, end)
  if (path.charCodeAt(0) === 0x2f /* / */) return path
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
 * is where `100 Continue` goes the first time the body is read (see `continueIfExpected`). `target`: the request
 * target as the client sent it (Express strips its mount path from `url`, never from `originalUrl`). One object a
 * request: the readers are its methods, the query is cut from the target only when the core reads it.
 */
export class NodeHttpRequest implements HttpRequest {
  readonly method: string
  readonly path: string
  readonly headers: HttpRequest["headers"]
  readonly framedBody: boolean | undefined
  readonly #request: IncomingMessage
  readonly #body: Readable
  readonly #response: ServerResponse | undefined
  readonly #target: string

  constructor(
    request: IncomingMessage,
    body: Readable = request,
    response?: ServerResponse,
    target = request.url ?? "/"
  ) {
    this.method = request.method ?? "GET"
    this.path = requestPath(target)
    this.headers = withEveryAuthorization(request)
    this.framedBody = http2FramedBody(request)
    this.#request = request
    this.#body = body
    this.#response = response
    this.#target = target
  }

  get query(): string {
    return requestQuery(this.#target)
  }

  readBody(limit: number): Promise<BodyReadResult> {
    continueIfExpected(this.#request, this.#response)
    return nodeRequestBodyReader(this.#request, this.#body)(limit)
  }

  readBodyNow(limit: number): BodyReadResult | undefined {
    return takeBodyNow(this.#request, this.#body, limit)
  }
}

/** The neutral request for a Node request (`NodeHttpRequest`), with `framedBody` only for HTTP/2. */
export const toHttpRequest = (
  request: IncomingMessage,
  body: Readable = request,
  response?: ServerResponse
): HttpRequest => new NodeHttpRequest(request, body, response)

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

/**
 * Writes the core's answer on Node's response as every Node adapter sends it: its status, its headers in its order
 * and spelling, then `content-length` for a body (none for a bodyless answer: a 204 has none, a HEAD carries GET's
 * from the core), head and text body in one write. `writeHead` with the header list, never `setHeader` one at a
 * time: Node then keeps no header map, and no framework adds, guesses or rewrites a header.
 */
export const writeNodeResponse = (request: IncomingMessage, response: ServerResponse, answer: HttpResponse): void => {
  if (answer.stream !== undefined) return writeNodeStream(request, response, answer, answer.stream)
  closeIfBodyUnread(request, response)
  const headers = answer.headers
  const head: Array<string> = []
  for (const name in headers) head.push(name, headers[name] ?? "")
  const payload = responsePayload(answer.body)
  if (payload !== undefined) head.push("content-length", String(Buffer.byteLength(payload)))
  response.writeHead(answer.status, head)
  response.end(payload)
}

/**
 * Writes a streamed answer (an event stream, docs/api.md "Events"): the head at once, with no length (chunked under
 * HTTP/1.1), then each chunk as it comes, each written (and so sent) on its own; the response ends when the stream
 * does, and the stream stops when the client goes away or leaves more than `maxUnsentBytes` unread.
 */
export const writeNodeStream = (
  request: IncomingMessage,
  response: ServerResponse,
  answer: HttpResponse,
  stream: StreamedBody
): void => {
  closeIfBodyUnread(request, response)
  const head: Array<string> = []
  for (const name in answer.headers) head.push(name, answer.headers[name] ?? "")
  response.writeHead(answer.status, head)
  response.flushHeaders()
  let done = false
  const stop = stream.start(
    (chunk) => {
      if (done) return
      response.write(chunk)
      // A client that does not read: Node would hold every later chunk. Closing stops the stream ("close" below).
      if (response.writableLength > stream.maxUnsentBytes) response.destroy()
    },
    () => {
      if (done) return
      done = true
      response.end()
    }
  )
  const gone = (): void => {
    if (done) return
    done = true
    stop()
  }
  if (response.destroyed) gone()
  else response.once("close", gone)
}

/** Relays one Node request to the core and writes its answer (`makeNodeRelay`). */
export type NodeRelay = (request: IncomingMessage, response: ServerResponse, body?: Readable, target?: string) => void

/**
 * The core behind a Node server, writing its answers straight to Node's response (`writeNodeResponse`): what a
 * framework's standalone server hands each request to once it has routed it. Started one microtask after the call,
 * when Node has handed over the rest of the packet that brought the headers, so that a small body is taken without a
 * wait (`readBodyNow`); an answer that waited for nothing is written in that same microtask, with no promise made.
 * Should a host's callback throw, or writing fail, the connection is closed: there is no answer left to give.
 */
export const makeNodeRelay = (options: HttpHandlerOptions): NodeRelay => {
  const handler: EagerHttpHandler = makeEagerHttpHandler(options)
  return (request, response, body = request, target = request.url ?? "/") => {
    queueMicrotask(() => {
      try {
        const answer = handler(new NodeHttpRequest(request, body, response, target))
        if (answer instanceof Promise)
          answer.then((awaited) => writeNodeResponse(request, response, awaited)).catch(() => response.destroy())
        else writeNodeResponse(request, response, answer)
      } catch {
        response.destroy()
      }
    })
  }
}
