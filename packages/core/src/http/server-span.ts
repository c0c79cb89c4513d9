import { Clock, Context, Exit, Option, type Tracer } from "effect"
import { methodLabel, OTHER_METHOD } from "./method-label.js"
import { header } from "./request-body.js"
import type { NeutralHandler, Reply } from "./reply.js"
import type { HttpRequest, HttpTracing } from "./types.js"

/** A host name or IPv4 address, or a bracketed IPv6 one: anything else a client sent as Host is not recorded. */
const HOST_NAME = /^(?:[A-Za-z0-9.-]{1,253}|\[[0-9A-Fa-f:.]{2,45}\])$/

/**
 * The Host header as `server.address` and `server.port` (`[::1]:3000`, `example.org:8080`, `example.org`), only when
 * it is a well-formed host (length-bounded before any pattern): a client's free text never reaches a span.
 */
const serverAddress = (host: string | undefined): { readonly address: string; readonly port?: number } | undefined => {
  if (host === undefined || host === "" || host.length > 260) return undefined
  const colon = host.lastIndexOf(":")
  const hasPort = colon !== -1 && colon > host.lastIndexOf("]") && /^[0-9]{1,5}$/.test(host.slice(colon + 1))
  const address = hasPort ? host.slice(0, colon) : host
  if (!HOST_NAME.test(address)) return undefined
  return hasPort ? { address, port: Number(host.slice(colon + 1)) } : { address }
}

/**
 * The server span of a request, after OpenTelemetry's HTTP server conventions: named `METHOD route-template`, with
 * the method, the route, the path (only of a route without parameters: a path nothing matched, or a parameter, may be
 * anything a client typed, credentials included, docs/SECURITY.md items 2 and 27), a well-formed Host; no other header
 * value, never the query.
 */
const startServerSpan = (
  tracing: HttpTracing,
  startTime: bigint,
  request: HttpRequest,
  route: string | undefined
): Tracer.Span => {
  const method = methodLabel(request.method)
  const known = method !== OTHER_METHOD
  const prefix = known ? request.method : "HTTP"
  const parent = tracing.remoteParent(request.headers)
  const span = tracing.tracer.span({
    name: route === undefined ? prefix : `${prefix} ${route}`,
    parent: parent === undefined ? Option.none() : Option.some(parent),
    annotations: Context.empty(),
    links: [],
    startTime,
    kind: "server",
    root: parent === undefined,
    sampled: parent?.sampled ?? true
  })
  span.attribute("http.request.method", method)
  if (!known) span.attribute("http.request.method_original", request.method)
  if (route !== undefined) {
    span.attribute("http.route", route)
    // Only a route without parameters matches nothing but its own path (in either slash form: router.ts), so only its
    // path is safe by construction; a `{id}` segment is whatever a client typed (docs/SECURITY.md, item 27).
    if (!route.includes("{")) span.attribute("url.path", request.path)
  }
  const server = serverAddress(header(request, "host"))
  if (server !== undefined) {
    span.attribute("server.address", server.address)
    if (server.port !== undefined) span.attribute("server.port", server.port)
  }
  return span
}

/**
 * Tracing around the neutral handler (docs/operations.md, "Traces"), as Effect's `HttpMiddleware.tracer` wraps an app:
 * a server span per request, the parent of the program's spans, ended with the answer's status (an error from 500
 * up), and its trace id on the answer for the log line. `routeOf` names the span before the answer exists: the
 * template the request will be answered under (a route lookup, the only work tracing repeats).
 */
export const withServerSpan = (
  inner: NeutralHandler,
  tracing: HttpTracing,
  routeOf: (request: HttpRequest) => string | undefined
): NeutralHandler => {
  const clock = Clock.Clock.defaultValue()
  return (request) => {
    const span = startServerSpan(tracing, clock.currentTimeNanosUnsafe(), request, routeOf(request))
    const end = (reply: Reply): Reply => {
      const status = reply.response.status
      span.attribute("http.response.status_code", status)
      if (status >= 500) span.attribute("error.type", String(status))
      span.end(clock.currentTimeNanosUnsafe(), status >= 500 ? Exit.fail(`HTTP ${status}`) : Exit.void)
      return { ...reply, traceId: span.traceId }
    }
    const pending = inner(request, span)
    return pending instanceof Promise ? pending.then(end) : end(pending)
  }
}
