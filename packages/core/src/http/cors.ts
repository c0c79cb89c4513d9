import { headerValue } from "./header-value.js"
import { header } from "./request-body.js"
import type { HttpRequest } from "./types.js"

/**
 * What the API reads from a request: the headers a browser may send it (docs/api.md, "CORS"); `Last-Event-ID` is how a
 * page following the events stream resumes (`@accord/client/events-stream`), and is not CORS-safelisted.
 */
export const CORS_ALLOW_HEADERS = "Authorization, Content-Type, If-Match, If-None-Match, Last-Event-ID, X-Request-Id"
/** The response headers a page may read besides the CORS-safelisted ones. */
export const CORS_EXPOSE_HEADERS =
  "X-Request-Id, ETag, Retry-After, RateLimit, RateLimit-Policy, WWW-Authenticate, Deprecation, Sunset, Link"
/** How long a browser may keep a preflight's answer, in seconds (Chromium keeps at most 7200). */
export const CORS_MAX_AGE = "600"

/** `HttpHandlerOptions.corsOrigins`: exact origins (`https://app.example.com`), or `"*"` for any. */
export type CorsOrigins = ReadonlyArray<string> | "*"

/** Longer Origin values are refused unread: a scheme, `://`, a DNS name (at most 253 characters) and a port fit. */
const MAX_ORIGIN_LENGTH = 512

const isLowerLetter = (code: number): boolean => code >= 0x61 && code <= 0x7a
const isDigit = (code: number): boolean => code >= 0x30 && code <= 0x39
// RFC 3986, 3.1, as a browser serialises it: lower case (`+`, `-`, `.`).
const isSchemeCharacter = (code: number): boolean =>
  isLowerLetter(code) || isDigit(code) || code === 0x2b || code === 0x2d || code === 0x2e
// A host name as a browser serialises it: lower case, IDNs as `xn--` labels (`-`, `.`, `_`).
const isHostCharacter = (code: number): boolean =>
  isLowerLetter(code) || isDigit(code) || code === 0x2d || code === 0x2e || code === 0x5f
// An IPv6 address inside its brackets: lower-case hex, `:`, and `.` for an embedded IPv4 address.
const isIpv6Character = (code: number): boolean =>
  isDigit(code) || (code >= 0x61 && code <= 0x66) || code === 0x3a || code === 0x2e

/** The index after the run of characters from `from` that `accepts` takes. */
const skipWhile = (value: string, from: number, accepts: (code: number) => boolean): number => {
  let index = from
  while (index < value.length && accepts(value.charCodeAt(index))) index++
  return index
}

/**
 * Whether `value` is one origin as a browser serialises it (RFC 6454, 6.2): `null`, or `scheme "://" host [":"
 * port]` in lower case, the host a name or a bracketed IPv6 address, the port 0 to 65535 without leading zeros. Never
 * a comma or whitespace, so two Origin lines joined into one value are refused (docs/SECURITY.md, item 38). One pass,
 * no pattern, after the length bound.
 */
const isSerialisedOrigin = (value: string): boolean => {
  if (value === "null") return true
  if (value.length > MAX_ORIGIN_LENGTH || !isLowerLetter(value.charCodeAt(0))) return false
  const schemeEnd = skipWhile(value, 1, isSchemeCharacter)
  if (!value.startsWith("://", schemeEnd)) return false
  const hostStart = schemeEnd + 3
  let hostEnd: number
  if (value.charCodeAt(hostStart) === 0x5b) {
    const addressEnd = skipWhile(value, hostStart + 1, isIpv6Character)
    if (addressEnd === hostStart + 1 || value.charCodeAt(addressEnd) !== 0x5d) return false
    hostEnd = addressEnd + 1
  } else {
    hostEnd = skipWhile(value, hostStart, isHostCharacter)
    if (hostEnd === hostStart) return false
  }
  if (hostEnd === value.length) return true
  if (value.charCodeAt(hostEnd) !== 0x3a) return false
  const port = value.slice(hostEnd + 1)
  return (
    port.length >= 1 &&
    port.length <= 5 &&
    skipWhile(port, 0, isDigit) === port.length &&
    (port === "0" || !port.startsWith("0")) &&
    Number(port) <= 65535
  )
}

/**
 * The request's Origin when the host allows it, else undefined (no CORS headers at all). Exact, case-sensitive
 * comparison (an origin is serialised by the browser); one Origin header holding one origin only, whatever the list
 * (docs/api.md, "CORS").
 */
export const corsOriginOf = (origins: CorsOrigins | undefined): ((request: HttpRequest) => string | undefined) => {
  if (origins === undefined) return () => undefined
  const allowed = origins === "*" ? undefined : new Set(origins)
  return (request) => {
    // A host may hand several Origin lines over as a list; Node and fetch's Headers join them with ", ".
    const origin = headerValue(request.headers, "origin")
    if (typeof origin !== "string" || !isSerialisedOrigin(origin)) return undefined
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
