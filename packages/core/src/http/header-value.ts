import type { HeaderLookup, HttpHeaders } from "./types.js"

// A record's value is a string or an array, never a function, so a `get` method tells the two forms apart.
const isHeaderLookup = (headers: HttpHeaders): headers is HeaderLookup => typeof headers["get"] === "function"

/** One header by lower-case name, from a record or a lookup (`HttpHeaders`); undefined when it was not sent. */
export const headerValue = (headers: HttpHeaders, name: string): string | ReadonlyArray<string> | undefined =>
  isHeaderLookup(headers) ? (headers.get(name) ?? undefined) : headers[name]
