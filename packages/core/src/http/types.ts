import type { AccordServices } from "@accord/domain"
import type { ManagedRuntime, Tracer } from "effect"
import type { CorsOrigins } from "./cors.js"
import type { AliasDates, DeprecatedCall } from "./deprecation.js"
import type { Implementations, StreamImplementations } from "./implementation.js"
import type { RateLimiter } from "./rate-limit.js"

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

/** Headers by lower-case name, as Node gives them: a field sent more than once may be an array. */
export type HeaderRecord = Readonly<Record<string, string | ReadonlyArray<string> | undefined>>

/** Headers looked up one name at a time, as fetch's `Headers` does (a field sent twice comes joined by ", "). */
export interface HeaderLookup {
  readonly get: (name: string) => string | null
}

/**
 * A request's headers in either form: the core reads only the few it needs (through `headerValue`), so a fetch
 * adapter passes its `Headers` as they are, never copied into a record.
 */
export type HttpHeaders = HeaderRecord | HeaderLookup

/**
 * A transport-neutral request. Adapters fill it from their framework without interpreting anything: header names
 * lower-case (as Node gives them), the raw URL path (no query string, still percent-encoded) and query, and a body reader
 * that the core calls only after the route and the credentials passed, with the byte limit to enforce. The core calls
 * `readBody` and `readBodyNow` as methods of the request, so a class may implement them (one object a request).
 */
export interface HttpRequest {
  readonly method: string
  readonly path: string
  /**
   * The query: what follows the first `?` of the request target, up to a `#`, still percent-encoded; absent or ""
   * when there is none. Read only by an operation that declares query parameters.
   */
  readonly query?: string
  readonly headers: HttpHeaders
  /** Reads at most `limit` bytes of the body; reports TooLarge as soon as more arrive. Absent: no body at all. */
  readonly readBody?: (limit: number) => Promise<BodyReadResult>
  /**
   * The body without waiting, when it has already arrived in full (as small bodies do, with the headers); undefined
   * when it has not, and `readBody` then waits for it. Called, like `readBody`, only after the credentials passed.
   */
  readonly readBodyNow?: (limit: number) => BodyReadResult | undefined
  /**
   * Whether a body follows, where the protocol's framing says so rather than the headers: under HTTP/2 (RFC 9113,
   * 8.1) a request has a body unless its headers ended the stream, Content-Length or not. Absent: HTTP/1.1's rule
   * (RFC 9112, 6.3), a positive Content-Length or a Transfer-Encoding (docs/api.md, "Precise rules").
   */
  readonly framedBody?: boolean | undefined
}

/** A transport-neutral response; adapters write it as it is (status, every header, body bytes). */
export interface HttpResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  /** UTF-8 text or bytes; undefined for no body (204, HEAD) and for a streamed one. */
  readonly body: string | Uint8Array | undefined
  /**
   * A body written as it is made (an event stream, docs/api.md "Events"), with no Content-Length: an adapter writes
   * the head, then each chunk at once (no buffering, no compression), and ends the response when the stream ends.
   */
  readonly stream?: StreamedBody
}

/**
 * A streamed body. `start` is called once the head is written: it calls `write` with each chunk of UTF-8 text, to be
 * sent at once, and `end` once, when the stream is over (the host drains); it returns what the adapter calls when
 * the client went away first (then `end` is not called). Neither callback may be called after `end` or the stop.
 */
export interface StreamedBody {
  readonly start: (write: (chunk: string) => void, end: () => void) => () => void
  /**
   * What a client may leave unread, in bytes: past it the adapter closes the connection and stops the stream (a
   * client that never reads would otherwise make the server hold every event it is sent). Resuming loses nothing.
   */
  readonly maxUnsentBytes: number
}

/** The bounds and timings of event streams (docs/operations.md, "Live events"); every field has a default. */
export interface EventStreamOptions {
  /** A `: heartbeat` comment after this long, again and again, default 15000 ms. */
  readonly heartbeatMs?: number
  /** Streams one credential may hold open, default 5; past it 429 `too_many_streams`. */
  readonly perCredential?: number
  /** Streams the handler holds open in total, default 1000; past it 503 `unavailable`. */
  readonly total?: number
  /** Bytes a client may leave unread before its connection is closed (it resumes from its last id), default 1 MiB. */
  readonly maxUnsentBytes?: number
  /** A stream reads the store again after this long even without a wake-up, default 5000 ms. */
  readonly rereadMs?: number
  /** Told each time a stream opens (+1) or ends (-1), for the host's gauge. */
  readonly onOpenChange?: (delta: 1 | -1) => void
  /** Told how many events a stream has just sent, for the host's counter. */
  readonly onEventsSent?: (count: number) => void
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

export interface HttpHandlerOptions {
  readonly runtime: AccordRuntime
  /**
   * Each operation of the contract bound to what runs it (core's `Implementations`), default Accord's map
   * (`accordImplementations`, the use cases of @accord/domain); a test may replace one: `{ ...accordImplementations,
   * health: () => ... }`.
   */
  readonly implementations?: Implementations
  /** What each operation that streams reads (core's `StreamImplementations`), default Accord's. */
  readonly streamImplementations?: StreamImplementations
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
  /**
   * CORS (docs/api.md, "CORS"): the origins a browser page may call the API from, exact (`https://app.example.com`),
   * or `"*"` for any. Off when absent: no `Access-Control-*` header at all.
   */
  readonly corsOrigins?: CorsOrigins
  /**
   * A PUT of the preferences without `If-Match` is 428 `precondition_required` (docs/api.md, "Conditional requests").
   * Default false.
   */
  readonly requireIfMatch?: boolean
  /** Longest accepted request path in characters, default 2048; longer is 414 `uri_too_long`. */
  readonly maxPathLength?: number
  /**
   * The dates of every deprecated alias path, in place of the contract's defaults (docs/api.md, "Versioning"); a
   * sunset before the deprecation throws when the handler is built. Past the sunset the alias answers 410 `gone`.
   */
  readonly aliasDates?: AliasDates
  /**
   * Called for each call of a deprecated path or operation, with the kind of credential it came with (never the
   * credential): a host's metric and log of who still calls it (docs/operations.md, "Metrics").
   */
  readonly onDeprecatedCall?: (call: DeprecatedCall) => void
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
  /**
   * Settles when the host starts draining, after `isDraining` turned true: every open event stream then ends after
   * its last complete event, so that its client reconnects elsewhere (docs/api.md, "Events"). The drain never waits
   * for a stream. The adapters' standalone servers set it.
   */
  readonly drainStarted?: PromiseLike<void>
  /** Event streams' bounds and timings (docs/operations.md, "Live events"). */
  readonly eventStreams?: EventStreamOptions
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
  /**
   * The same body already compressed, by content coding (computed once, when the files are loaded: nothing is
   * compressed per request). A file that has this field, even empty (too small to pay), is negotiated: it is sent in
   * the coding the request's `Accept-Encoding` prefers (`br`, then `gzip`, else as it is), always with `Vary:
   * Accept-Encoding`, a strong `ETag` per coding and `If-None-Match` answered 304 (docs/api.md, "The docs page's
   * files"). A file without it is sent as it is, with neither.
   */
  readonly encodings?: StaticAssetEncodings
}

/** A static file's body in each content coding the server has it in; each must decode to the file's `body`. */
export interface StaticAssetEncodings {
  readonly br?: Uint8Array
  readonly gzip?: Uint8Array
}

/** Files of the API reference UI, by file name relative to `{prefix}/docs/`. */
export type DocsAssets = ReadonlyMap<string, StaticAsset>

/** The one function adapters call. Never rejects: every failure is already a response. */
export type HttpHandler = (request: HttpRequest) => Promise<HttpResponse>

/**
 * `HttpHandler` answering at once when nothing made it wait (store-memory, a body that came with the headers): the
 * response itself, else a promise of it, so that an adapter writes it in the same turn, with no promise made. Only a
 * host's own callback that throws (onRequest, onResponse, onInternalError) makes it throw or its promise reject.
 */
export type EagerHttpHandler = (request: HttpRequest) => HttpResponse | Promise<HttpResponse>
