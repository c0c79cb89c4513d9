import { loggedPath } from "./logged-path.js"
import type { NeutralHandler, Reply } from "./reply.js"
import type { EagerHttpHandler, HttpHandlerOptions, HttpRequest, HttpResponse, RequestLog } from "./types.js"

/**
 * A duration in milliseconds kept to the microsecond: what a log line can state. An unrounded difference of two
 * `performance.now()` readings has up to 17 significant digits, and writing such a double as text took about 1 us per
 * line (bench/remaining-costs.md); three decimals take a fraction of that.
 */
const toMicrosecond = (ms: number): number => Math.round(ms * 1000) / 1000

/** The log line of an answer: the route it matched, else the path as a log may carry it (`loggedPath`). */
const requestLog = (
  request: HttpRequest,
  { requestId, route, response, traceId }: Reply,
  durationMs: number,
  knownSegments: ReadonlySet<string>
): RequestLog => {
  const path = route === undefined ? loggedPath(request.path, knownSegments) : undefined
  return traceId === undefined
    ? { requestId, method: request.method, route, path, status: response.status, durationMs }
    : { requestId, method: request.method, route, path, status: response.status, durationMs, traceId }
}

const responseOf = (reply: Reply): HttpResponse => reply.response

/**
 * The access log around the neutral handler, as Effect's `HttpMiddleware.logger` wraps an app: `onRequest` as it takes
 * a request, then one `RequestLog` to `onResponse` once it is answered, timed from the start. The handler answers every
 * failure itself: only a host's own callback that throws (onRequest, onResponse, onInternalError) makes it throw or
 * its promise reject. The answer is returned at once when nothing waited (`EagerHttpHandler`); without either hook
 * nothing is timed.
 */
export const withAccessLog = (
  inner: NeutralHandler,
  { onRequest, onResponse }: Pick<HttpHandlerOptions, "onRequest" | "onResponse">,
  knownSegments: ReadonlySet<string>
): EagerHttpHandler => {
  if (onRequest === undefined && onResponse === undefined)
    return (request) => {
      const pending = inner(request)
      return pending instanceof Promise ? pending.then(responseOf) : pending.response
    }
  const finish = (request: HttpRequest, reply: Reply, started: number): HttpResponse => {
    onResponse?.(requestLog(request, reply, toMicrosecond(performance.now() - started), knownSegments))
    return reply.response
  }
  return (request) => {
    const started = performance.now()
    onRequest?.()
    const pending = inner(request)
    return pending instanceof Promise
      ? pending.then((reply) => finish(request, reply, started))
      : finish(request, pending, started)
  }
}
