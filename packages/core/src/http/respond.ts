import { CORS_EXPOSE_HEADERS } from "./cors.js"
import { JSON_TYPE } from "./endpoints.js"
import type { DomainError } from "../domain/errors.js"
import { PROBLEM_CONTENT_TYPE } from "@accord/contract"
import { problemBody, problemOf, problems, type Problem } from "./problem.js"
import type { HttpResponse, StaticAsset } from "./types.js"

/** What answered a request: the response, its request id and the route template it matched (for the log and the span). */
export interface Answer {
  readonly response: HttpResponse
  readonly requestId: string
  /** The matched route's template with the prefix (`/api/health`); undefined when none matched (and for a 500). */
  readonly route: string | undefined
  /** The trace id of the request's server span, set by the tracing wrapper (`withServerSpan`). */
  readonly traceId?: string
}

/** The answers of one request, each with the common headers (docs/api.md, "Headers on every response"). */
export interface Responder {
  readonly json: (status: number, value: unknown, route: string) => Answer
  /** A JSON representation already serialised, with its strong ETag (docs/api.md, "Conditional requests"). */
  readonly tagged: (status: number, text: string, etag: string, route: string) => Answer
  /** A static file with its own type and `Cache-Control`; none is a 404. */
  readonly file: (file: StaticAsset | undefined, route: string) => Answer
  readonly empty: (status: number, extra: Readonly<Record<string, string>>, route: string) => Answer
  readonly problem: (problem: Problem, route?: string) => Answer
  /** A domain error's problem (`problemOf`). */
  readonly error: (error: DomainError, route: string) => Answer
  /** Whether the request came from an allowed origin (its answers carry CORS headers). */
  readonly cors: boolean
  /** The same answers with more common headers (the rate limit's, once the limiter was asked). */
  readonly withHeaders: (common: Readonly<Record<string, string>>) => Responder
  /** The same answers without CORS headers: a preflight that is refused gets the plain OPTIONS answer. */
  readonly withoutCors: () => Responder
}

const utf8 = new TextEncoder()

/** The bytes of a body as UTF-8 (core has no Buffer: it runs on every runtime). */
const byteLength = (body: string | Uint8Array): number =>
  typeof body === "string" ? utf8.encode(body).byteLength : body.byteLength

/**
 * Responses to one request (`requestId`); HEAD gets the same without a body. `corsOrigin`: the request's allowed
 * Origin, echoed on every answer with `Vary: Origin` and the exposed headers (docs/api.md, "CORS").
 */
export const responder = (
  requestId: string,
  isHead: boolean,
  corsOrigin?: string,
  common?: Readonly<Record<string, string>>
): Responder => {
  const respond = (
    route: string | undefined,
    status: number,
    contentType: string | undefined,
    body: string | Uint8Array | undefined,
    extra?: Readonly<Record<string, string>>,
    cacheControl = "no-store"
  ): Answer => {
    // Built field by field (no spreads): the order is the header order on the wire.
    const headers: Record<string, string> = {}
    if (contentType !== undefined) headers["content-type"] = contentType
    headers["cache-control"] = cacheControl
    headers["x-content-type-options"] = "nosniff"
    headers["x-request-id"] = requestId
    if (corsOrigin !== undefined) {
      headers["access-control-allow-origin"] = corsOrigin
      headers["access-control-expose-headers"] = CORS_EXPOSE_HEADERS
      headers["vary"] = "Origin"
    }
    if (common !== undefined) Object.assign(headers, common)
    if (extra !== undefined) Object.assign(headers, extra)
    if (!isHead) return { response: { status, headers, body }, requestId, route }
    // HEAD answers with GET's headers (docs/api.md, "Precise rules"; RFC 9110, 9.3.2), so with the length of the body
    // GET would send, last, where the adapters write GET's (docs/SECURITY.md, item 25).
    if (body !== undefined) headers["content-length"] = String(byteLength(body))
    return { response: { status, headers, body: undefined }, requestId, route }
  }
  const problem = (problem: Problem, route?: string): Answer =>
    respond(route, problem.status, PROBLEM_CONTENT_TYPE, problemBody(problem), problem.headers)
  const self: Responder = {
    json: (status, value, route) => respond(route, status, JSON_TYPE, JSON.stringify(value)),
    tagged: (status, text, etag, route) => respond(route, status, JSON_TYPE, text, { etag }),
    file: (file, route) =>
      file === undefined
        ? problem(problems.notFound(), route)
        : respond(route, 200, file.contentType, file.body, undefined, file.cacheControl),
    empty: (status, extra, route) => respond(route, status, undefined, undefined, extra),
    problem,
    error: (error, route) => problem(problemOf(error), route),
    cors: corsOrigin !== undefined,
    withHeaders: (more) =>
      responder(requestId, isHead, corsOrigin, common === undefined ? more : { ...common, ...more }),
    withoutCors: () => (corsOrigin === undefined ? self : responder(requestId, isHead, undefined, common))
  }
  return self
}
