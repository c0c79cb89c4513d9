import { loggedPath } from "./logged-path.js"
import type { NeutralHandler, Reply } from "./reply.js"
import type { HttpHandler, HttpHandlerOptions, HttpRequest, HttpResponse, RequestLog } from "./types.js"

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
  const log: RequestLog = { requestId, method: request.method, route, path, status: response.status, durationMs }
  return traceId === undefined ? log : { ...log, traceId }
}

/**
 * The access log around the neutral handler, as Effect's `HttpMiddleware.logger` wraps an app: `onRequest` as it takes
 * a request, then one `RequestLog` to `onResponse` once it is answered, timed from the start. The handler answers every
 * failure itself: only a host's own callback that throws (onRequest, onResponse, onInternalError) makes the promise
 * reject, and nothing throws from the call.
 */
export const withAccessLog =
  (
    inner: NeutralHandler,
    { onRequest, onResponse }: Pick<HttpHandlerOptions, "onRequest" | "onResponse">,
    knownSegments: ReadonlySet<string>
  ): HttpHandler =>
  (request) => {
    const started = performance.now()
    const finish = (reply: Reply): HttpResponse => {
      onResponse?.(requestLog(request, reply, toMicrosecond(performance.now() - started), knownSegments))
      return reply.response
    }
    try {
      onRequest?.()
      const pending = inner(request)
      return pending instanceof Promise ? pending.then(finish) : Promise.resolve(finish(pending))
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)))
    }
  }
