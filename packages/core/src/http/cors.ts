import { headerValue } from "./header-value.js"
import { header } from "./request-body.js"
import type { HttpRequest } from "./types.js"

/** What the API reads from a request: the headers a browser may send it (docs/api.md, "CORS"). */
export const CORS_ALLOW_HEADERS = "Authorization, Content-Type, If-Match, If-None-Match, X-Request-Id"
/** The response headers a page may read besides the CORS-safelisted ones. */
export const CORS_EXPOSE_HEADERS = "X-Request-Id, ETag, Retry-After, RateLimit, RateLimit-Policy, WWW-Authenticate"
/** How long a browser may keep a preflight's answer, in seconds (Chromium keeps at most 7200). */
export const CORS_MAX_AGE = "600"

/** `HttpHandlerOptions.corsOrigins`: exact origins (`https://app.example.com`), or `"*"` for any. */
export type CorsOrigins = ReadonlyArray<string> | "*"

/**
 * The request's Origin when the host allows it, else undefined (no CORS headers at all). Exact, case-sensitive
 * comparison (an origin is serialised by the browser); one Origin header only.
 */
export const corsOriginOf = (origins: CorsOrigins | undefined): ((request: HttpRequest) => string | undefined) => {
  if (origins === undefined) return () => undefined
  const allowed = origins === "*" ? undefined : new Set(origins)
  return (request) => {
    const origin = header(request, "origin")
    if (origin === undefined || Array.isArray(headerValue(request.headers, "origin"))) return undefined
    return allowed === undefined || allowed.has(origin) ? origin : undefined
  }
}

/**
 * The answer to a CORS preflight (an OPTIONS with Access-Control-Request-Method) from an allowed origin for a method the
 * route serves: its extra headers; undefined for any other preflight, which gets the plain OPTIONS answer.
 */
export const preflightHeaders = (
  request: HttpRequest,
  allow: string,
  serves: (method: string) => boolean
): Readonly<Record<string, string>> | undefined => {
  const method = header(request, "access-control-request-method")
  if (method === undefined || !serves(method)) return undefined
  return {
    allow,
    "access-control-allow-methods": allow,
    "access-control-allow-headers": CORS_ALLOW_HEADERS,
    "access-control-max-age": CORS_MAX_AGE,
    vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers"
  }
}

/** Whether an OPTIONS request is a CORS preflight. */
export const isPreflight = (request: HttpRequest): boolean =>
  headerValue(request.headers, "access-control-request-method") !== undefined &&
  headerValue(request.headers, "origin") !== undefined
