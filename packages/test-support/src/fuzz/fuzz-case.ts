import { METHODS } from "node:http"

// What one generated request is, as the generators build it and the oracle and the runner read it.

/** Whose credential the Authorization header carries, as far as the contract is concerned. */
export type Actor =
  | "a"
  | "b"
  | "client"
  /** No header, an empty one, or a scheme other than Bearer/Token: 401 unauthenticated. */
  | "none"
  /** Bearer/Token with an empty or ill-formed token: 401 invalid_token. */
  | "malformed"
  /** A well-formed token nobody has: 401 invalid_token. */
  | "unknown"
  /** Random header text: some 401. */
  | "random"

/**
 * What a non-empty body's text is as JSON, as it was built: an object (its fields then decide), invalid JSON (syntax,
 * UTF-8, a byte-order mark, a duplicate or prototype key, too deep), JSON that is not an object, or unknown (random
 * bytes, a cut that may parse). What the operation makes of an object is the oracle's: it decodes it with the body
 * Schema.
 */
export type BodySyntax = "object" | "invalid_json" | "invalid_body" | "unknown"

export interface FuzzCase {
  /** Methods Node's parser does not know (lower-case, unknown, long) go on a raw socket: see `isWireMethod`. */
  readonly method: string
  readonly path: string
  readonly actor: Actor
  readonly authorization: string | undefined
  readonly contentType: string | undefined
  /** Whether the contract takes `contentType` as JSON; undefined for random text. */
  readonly json: boolean | undefined
  readonly body: string | Uint8Array | undefined
  /**
   * How the body is framed: undefined for `Content-Length` (none without a body), else the Transfer-Encoding sent,
   * the body then chunked (`chunked` alone on a pooled connection, any other value on a raw socket).
   */
  readonly transferEncoding: string | undefined
  readonly syntax: BodySyntax
  readonly requestId: string | undefined
  /** Values of the body's secret fields (a password): no response may contain any of them. */
  readonly secrets: ReadonlyArray<string>
}

/** A method Node's HTTP parser refuses before any adapter runs (bare `400` and `Connection: close`). */
export const isWireMethod = (method: string): boolean => !METHODS.includes(method)

/** The body's size in bytes, as the contract counts it (docs/api.md, "Precise rules"). */
export const bodyLength = (body: FuzzCase["body"]): number =>
  body === undefined ? 0 : typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.length
