import type { Tracer } from "effect"
import { CORS_EXPOSE_HEADERS } from "./cors.js"
import { JSON_TYPE } from "./endpoints.js"
import { PROBLEM_CONTENT_TYPE } from "@accord/contract"
import type { DomainError } from "@accord/domain"
import { problem, problemBody, problemOf, type Problem } from "./problem.js"
import { ifNoneMatchMatches, readEntityTagCondition } from "./conditional.js"
import { headerValue } from "./header-value.js"
import { chooseRepresentation, representationsOf } from "./static-file.js"
import type { HttpHeaders, HttpRequest, HttpResponse, StaticAsset, StreamedBody } from "./types.js"
import { EVENT_STREAM_TYPE } from "./event-stream.js"

/** What a stream's head carries besides the common headers: no proxy buffering (nginx reads this one). */
const STREAM_HEADERS: Readonly<Record<string, string>> = { "x-accel-buffering": "no" }

/**
 * A request's answer as the pipeline gives it: the response, its request id and the route template it matched (for
 * the access log and the span). `Responder` makes them; the adapters write `response`.
 */
export interface Reply {
  readonly response: HttpResponse
  readonly requestId: string
  /** The matched route's template with the prefix (`/api/health`); undefined when none matched (and for a 500). */
  readonly route: string | undefined
  /** The trace id of the request's server span, set by the tracing wrapper (`withServerSpan`). */
  readonly traceId?: string
}

/**
 * The neutral handler (`makeHttpHandler`'s inner one): a request in, its reply out, never a throw for a defect (it is
 * a 500). `parent`, when given, is the span every span of the request's program joins. Tracing and the access log wrap
 * it, each as another NeutralHandler.
 */
export type NeutralHandler = (request: HttpRequest, parent?: Tracer.AnySpan) => Reply | Promise<Reply>

const utf8 = new TextEncoder()
const NOT_FOUND = problem("not_found")

/** The bytes of a body as UTF-8 (core has no Buffer: it runs on every runtime). */
const byteLength = (body: string | Uint8Array): number =>
  typeof body === "string" ? utf8.encode(body).byteLength : body.byteLength

/**
 * The answers of one request (`requestId`), each with the common headers (docs/api.md, "Headers on every response");
 * HEAD gets the same without a body. `corsOn`: the server does CORS, so every answer carries `Vary: Origin`, whatever
 * the request's Origin (docs/SECURITY.md, item 37). `corsOrigin`: the request's allowed Origin, echoed on every answer
 * with the exposed headers (docs/api.md, "CORS"). A class, so that a request costs one object rather than a closure
 * per kind of answer (the handler makes one for every request).
 */
export class Responder {
  readonly #requestId: string
  readonly #isHead: boolean
  readonly #corsOn: boolean
  readonly #corsOrigin: string | undefined
  readonly #common: Readonly<Record<string, string>> | undefined

  constructor(
    requestId: string,
    isHead: boolean,
    corsOn: boolean,
    corsOrigin?: string,
    common?: Readonly<Record<string, string>>
  ) {
    this.#requestId = requestId
    this.#isHead = isHead
    this.#corsOn = corsOn
    this.#corsOrigin = corsOrigin
    this.#common = common
  }

  /** Whether the request came from an allowed origin (its answers carry CORS headers). */
  get cors(): boolean {
    return this.#corsOrigin !== undefined
  }

  json(status: number, value: unknown, route: string): Reply {
    return this.#respond(route, status, JSON_TYPE, JSON.stringify(value))
  }

  /** A JSON representation already serialised, with its strong ETag (docs/api.md, "Conditional requests"). */
  jsonWithEtag(status: number, text: string, etag: string, route: string): Reply {
    return this.#respond(route, status, JSON_TYPE, text, { etag })
  }

  /**
   * A static file with its own type and `Cache-Control`; none is a 404. A file with `encodings` is negotiated on the
   * request's `headers` (`Accept-Encoding`, `If-None-Match`: static-file.ts).
   */
  file(file: StaticAsset | undefined, route: string, headers: HttpHeaders): Reply {
    if (file === undefined) return this.problem(NOT_FOUND, route)
    const representations = representationsOf(file)
    if (representations === undefined)
      return this.#respond(route, 200, file.contentType, file.body, undefined, file.cacheControl)
    const chosen = chooseRepresentation(representations, headers)
    // Vary on every answer of a negotiated file, identity and 304 included, so that no cache hands a coding to a
    // client that did not ask for it (RFC 9110, 12.5.5); after CORS's `Origin` when the server does CORS.
    const vary = this.#corsOn ? "Origin, Accept-Encoding" : "Accept-Encoding"
    const ifNoneMatch = readEntityTagCondition(headerValue(headers, "if-none-match"))
    // A 304 carries what the 200 would have for a cache to update (RFC 9110, 15.4.5): ETag, Vary, Cache-Control.
    if (ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, chosen.etag))
      return this.#respond(route, 304, undefined, undefined, { etag: chosen.etag, vary }, file.cacheControl)
    const extra: Record<string, string> =
      chosen.contentEncoding === undefined
        ? { etag: chosen.etag, vary }
        : { "content-encoding": chosen.contentEncoding, etag: chosen.etag, vary }
    return this.#respond(route, 200, file.contentType, chosen.body, extra, file.cacheControl)
  }

  /** A 200 event stream (docs/api.md, "Events"): the common headers, no ETag, no length, and the body as it comes. */
  stream(body: StreamedBody, route: string): Reply {
    const reply = this.#respond(route, 200, EVENT_STREAM_TYPE, undefined, STREAM_HEADERS)
    return { ...reply, response: { ...reply.response, stream: body } }
  }

  empty(status: number, extra: Readonly<Record<string, string>>, route: string): Reply {
    return this.#respond(route, status, undefined, undefined, extra)
  }

  problem(problem: Problem, route?: string): Reply {
    return this.#respond(route, problem.status, PROBLEM_CONTENT_TYPE, problemBody(problem), problem.headers)
  }

  /** A domain error's problem (`problemOf`). */
  error(error: DomainError, route: string): Reply {
    return this.problem(problemOf(error), route)
  }

  /** The same answers with more common headers (the rate limit's, once the limiter was asked). */
  withHeaders(more: Readonly<Record<string, string>>): Responder {
    const common = this.#common === undefined ? more : { ...this.#common, ...more }
    return new Responder(this.#requestId, this.#isHead, this.#corsOn, this.#corsOrigin, common)
  }

  /** The same answers without CORS headers (still varying on Origin): a refused preflight gets the plain OPTIONS answer. */
  withoutCors(): Responder {
    return this.#corsOrigin === undefined
      ? this
      : new Responder(this.#requestId, this.#isHead, this.#corsOn, undefined, this.#common)
  }

  #respond(
    route: string | undefined,
    status: number,
    contentType: string | undefined,
    body: string | Uint8Array | undefined,
    extra?: Readonly<Record<string, string>>,
    cacheControl = "no-store"
  ): Reply {
    const requestId = this.#requestId
    // Built field by field (no spreads): the order is the header order on the wire.
    const headers: Record<string, string> = {}
    if (contentType !== undefined) headers["content-type"] = contentType
    headers["cache-control"] = cacheControl
    headers["x-content-type-options"] = "nosniff"
    headers["x-request-id"] = requestId
    if (this.#corsOrigin !== undefined) {
      headers["access-control-allow-origin"] = this.#corsOrigin
      headers["access-control-expose-headers"] = CORS_EXPOSE_HEADERS
    }
    // Every answer of a server that does CORS, so that no shared cache hands one origin's copy to another (a preflight's
    // or a file's `extra` widens it in place).
    if (this.#corsOn) headers["vary"] = "Origin"
    if (this.#common !== undefined) Object.assign(headers, this.#common)
    if (extra !== undefined) Object.assign(headers, extra)
    if (!this.#isHead) return { response: { status, headers, body }, requestId, route }
    // HEAD answers with GET's headers (docs/api.md, "Precise rules"; RFC 9110, 9.3.2), so with the length of the body
    // GET would send, last, where the adapters write GET's (docs/SECURITY.md, item 25).
    if (body !== undefined) headers["content-length"] = String(byteLength(body))
    return { response: { status, headers, body: undefined }, requestId, route }
  }
}
