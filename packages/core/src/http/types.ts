import type { ManagedRuntime, Tracer } from "effect"
import type { RateLimiter } from "./rate-limit.js"
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
   * The body did not arrive within the request timeout: the server has already answered 408 and closed the
   * connection; the handler's answer is only logged (docs/api.md, "Decisions where the contract is silent").
   */
  | { readonly _tag: "TimedOut" }

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
  /**
   * When no route matched, the path as a log may carry it (capped, escaped, long unknown segments masked: docs/SECURITY.md, item 16);
   * undefined otherwise (the route says it).
   */
  readonly path: string | undefined
  readonly status: number
  readonly durationMs: number
  /** The trace id of the request's server span; present only when the handler traces (`HttpHandlerOptions.tracing`). */
  readonly traceId?: string
}

/**
 * What the handler needs to trace requests (docs/operations.md, "Traces"): the tracer the host also installs in the
 * runtime (so the use case and store spans join the same trace), and how a request names its remote parent. Absent:
 * the handler makes no span at all.
 */
export interface HttpTracing {
  readonly tracer: Tracer.Tracer
  /** The caller's span named by the request's headers (W3C `traceparent`), or undefined to start a new trace. */
  readonly remoteParent: (headers: HttpRequest["headers"]) => Tracer.AnySpan | undefined
}

/**
 * A request a standalone server refused before the handler ran (malformed HTTP, headers too large, a timeout, an
 * expectation it cannot meet, a missing Host): one log line each, like `RequestLog` (docs/api.md, "Errors").
 */
export interface ClientErrorLog {
  readonly requestId: string
  /** Undefined when Node could not parse a request line. */
  readonly method: string | undefined
  readonly status: number
}

export interface HttpHandlerOptions {
  readonly runtime: AccordRuntime
  /** Mount prefix, default `/api`. Paths outside it are 404 problems. */
  readonly prefix?: string
  /** Request body limit in bytes, default 16384. */
  readonly bodyLimit?: number
  /** Static files of the offline API reference page, served under `{prefix}/docs`. */
  readonly docs?: DocsAssets
  /**
   * Per-credential rate limit (e.g. from `@accord/rate-limit`); off when absent. Over the limit: 429 `rate_limited`
   * with Retry-After. Asked once per request that carries a valid credential, before the body is read.
   */
  readonly rateLimit?: RateLimiter
  /** Longest accepted request path in characters, default 2048; longer is 414 `uri_too_long`. */
  readonly maxPathLength?: number
  /**
   * Called as the handler takes a request, before anything else; `onResponse` follows once it is answered (unless a
   * host callback throws). For a host's in-flight gauge; costs nothing when absent.
   */
  readonly onRequest?: () => void
  /**
   * Whether the host is shutting down: from the moment it returns true, `{prefix}/health/ready` answers 503 so that
   * load balancers send new requests elsewhere, while every other route keeps answering (docs/api.md, "Probes").
   * The adapters' standalone servers set it during their drain; a host that mounts the handler itself passes its own.
   */
  readonly isDraining?: () => boolean
  readonly onResponse?: (log: RequestLog) => void
  /**
   * Traces every request: a server span, a span for the use case, and whatever spans the runtime's services make.
   * Read once, when the handler is built: without it the handler runs the untraced program, at no cost.
   */
  readonly tracing?: HttpTracing
  /** Called for every 500 with the request id; the client sees only a generic problem. */
  readonly onInternalError?: (requestId: string, cause: unknown) => void
}

export interface StaticAsset {
  readonly contentType: string
  readonly body: Uint8Array
  /**
   * The file's `Cache-Control`, default `no-store` like every other response: a file whose URL carries its version
   * may say `public, max-age=31536000, immutable` (docs/api.md, "Headers on every response").
   */
  readonly cacheControl?: string
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
  /** Every refusal the server answers itself, before the handler (docs/SECURITY.md, "Every refusal is logged"). */
  readonly onClientError?: (log: ClientErrorLog) => void
  /**
   * Most connections open at once, default 0 (no cap); past it a new connection is closed at once. Keep it below
   * the process's file descriptor limit (docs/SECURITY.md, "Clients that never read their answers").
   */
  readonly maxConnections?: number
}

/** A listening server. `close()` drains: stops accepting, answers what it accepted, then closes connections. */
export interface RunningServer {
  /** `http://HOST:PORT` with the actual port. */
  readonly url: string
  readonly close: () => Promise<void>
}
