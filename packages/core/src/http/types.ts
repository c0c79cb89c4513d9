import type { ManagedRuntime } from "effect"
import type { RateLimitOptions } from "./rate-limit.js"
import type { Authenticator } from "../ports/authenticator.js"
import type { PasswordHasher } from "../ports/password-hasher.js"
import type { PaymentMethods } from "../ports/payment-methods.js"
import type { PlanEntries } from "../ports/plan-entries.js"
import type { PreferencesStore } from "../ports/preferences-store.js"
import type { StoreAdmin } from "../ports/store-admin.js"

/** What a store provides: every repository port, the authenticator over its credentials, and admin. */
export type StoreServices = PlanEntries | PreferencesStore | PaymentMethods | Authenticator | StoreAdmin

/** Everything the HTTP binding needs at run time. */
export type AccordServices = StoreServices | PasswordHasher

/** The runtime a host builds once (e.g. `ManagedRuntime.make(layer)`) and passes to an adapter. */
export type AccordRuntime = ManagedRuntime.ManagedRuntime<AccordServices, unknown>

/** Outcome of reading a request body through the adapter's reader. */
export type BodyReadResult =
  | { readonly _tag: "Read"; readonly bytes: Uint8Array }
  | { readonly _tag: "TooLarge" }
  /** The client went away or the stream broke; nothing will be answered to it. */
  | { readonly _tag: "Aborted" }

/**
 * A transport-neutral request. Adapters fill it from their framework without interpreting anything: header names
 * lower-case (as Node gives them), the raw URL path (no query string, still percent-encoded), and a body reader
 * that the core calls only after the route and the credentials passed, with the byte limit to enforce.
 */
export interface HttpRequest {
  readonly method: string
  readonly path: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** Reads at most `limit` bytes of the body; reports TooLarge as soon as more arrive. Absent: no body at all. */
  readonly readBody?: (limit: number) => Promise<BodyReadResult>
  /**
   * The body without waiting, when it has already arrived in full (as small bodies do, with the headers); undefined
   * when it has not, and `readBody` then waits for it. Called, like `readBody`, only after the credentials passed.
   */
  readonly readBodyNow?: (limit: number) => BodyReadResult | undefined
}

/** A transport-neutral response; adapters write it as it is (status, every header, body bytes). */
export interface HttpResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** UTF-8 text or bytes; undefined for no body (204, HEAD). */
  readonly body: string | Uint8Array | undefined
}

/** One line per answered request, for the host's logger. Never carries credentials or bodies. */
export interface RequestLog {
  readonly requestId: string
  readonly method: string
  /** The route template (e.g. `/api/payments/v1/payment-methods/{id}/`), or undefined when no route matched. */
  readonly route: string | undefined
  readonly status: number
  readonly durationMs: number
}

export interface HttpHandlerOptions {
  readonly runtime: AccordRuntime
  /** Mount prefix, default `/api`. Paths outside it are 404 problems. */
  readonly prefix?: string
  /** Request body limit in bytes, default 16384. */
  readonly bodyLimit?: number
  /** Static files of the offline API reference page, served under `{prefix}/docs`. */
  readonly docs?: DocsAssets
  /** Per-credential token bucket; off when absent. Over the limit: 429 `rate_limited` with Retry-After. */
  readonly rateLimit?: RateLimitOptions
  /** Longest accepted request path in characters, default 2048; longer is 414 `uri_too_long`. */
  readonly maxPathLength?: number
  readonly onResponse?: (log: RequestLog) => void
  /** Called for every 500 with the request id; the client sees only a generic problem. */
  readonly onInternalError?: (requestId: string, cause: unknown) => void
}

export interface StaticAsset {
  readonly contentType: string
  readonly body: Uint8Array
}

/** Files of the API reference UI, by file name relative to `{prefix}/docs/`. */
export type DocsAssets = ReadonlyMap<string, StaticAsset>

/** The one function adapters call. Never rejects: every failure is already a response. */
export type HttpHandler = (request: HttpRequest) => Promise<HttpResponse>

/** Options every adapter's standalone server factory takes. */
export interface StandaloneServerOptions extends HttpHandlerOptions {
  /** Default 127.0.0.1. */
  readonly host?: string
  /** Default 3000; 0 picks a free port. */
  readonly port?: number
  /** How long `close()` lets accepted requests finish before closing the rest, default 10000 ms. */
  readonly drainTimeoutMs?: number
  /** Request line plus headers, in bytes, default 16384; more is 431 `headers_too_large`. */
  readonly maxHeaderSize?: number
  /** Time to receive a whole request (headers and body), default 30000 ms, 0 for none; past it 408 `request_timeout`. */
  readonly requestTimeoutMs?: number
  /** Time to receive the headers, default 10000 ms (at most `requestTimeoutMs`), 0 for none; past it 408. */
  readonly headersTimeoutMs?: number
  /**
   * A connection error a framework reports outside any answer (a client gone mid-answer), for the host's log; the
   * server never writes it to stderr itself (docs/SECURITY.md, "Every log line is JSON").
   */
  readonly onConnectionError?: (error: unknown) => void
}

/** A listening server. `close()` drains: stops accepting, answers what it accepted, then closes connections. */
export interface RunningServer {
  /** `http://HOST:PORT` with the actual port. */
  readonly url: string
  readonly close: () => Promise<void>
}
