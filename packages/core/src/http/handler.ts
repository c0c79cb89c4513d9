import { Cause, Clock, Context, Data, Effect, Exit, Option, Result, Schema, type Tracer } from "effect"
import { decoderFor } from "../domain/decode.js"
import { InsufficientScope, NotFound, Unauthenticated, type DomainError } from "../domain/errors.js"
import type { Principal } from "../domain/principal.js"
import { Authenticator } from "../ports/authenticator.js"
import { readCredential } from "./authorization.js"
import { isJsonObject, readJson } from "./json-body.js"
import { loggedPath } from "./logged-path.js"
import { methodLabel, OTHER_METHOD } from "./method-label.js"
import { isJsonMediaType } from "./media-type.js"
import { makeOpenApiDocument } from "./openapi.js"
import { PROBLEM_CONTENT_TYPE, problemBody, problemOf, problems, type Problem } from "./problem.js"
import type { RateLimiter } from "./rate-limit.js"
import { compileRouter } from "./router.js"
import { apiRoutes, type Operation } from "./routes.js"
import type {
  AccordServices,
  BodyReadResult,
  HttpHandler,
  HttpHandlerOptions,
  HttpRequest,
  HttpResponse,
  HttpTracing,
  RequestLog,
  StaticAsset
} from "./types.js"

export const DEFAULT_PREFIX = "/api"
export const DEFAULT_BODY_LIMIT = 16_384
export const DEFAULT_MAX_PATH_LENGTH = 2048

const JSON_TYPE = "application/json; charset=utf-8"
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

/** A request refused before its use case ran, with the problem that answers it (a value: no stack to capture). */
class Refusal extends Data.TaggedClass("Refusal")<{ readonly problem: Problem }> {}

// The pipeline's own refusals carry no per-request data, so each is made once (an error's stack costs microseconds).
const NO_CALLER = Effect.succeed(undefined)
const NO_BODY = Effect.succeed(undefined)
const MISSING_CREDENTIAL = Effect.fail(new Unauthenticated({ reason: "missing" }))
const INVALID_CREDENTIAL = Effect.fail(new Unauthenticated({ reason: "invalid_token" }))
const INSUFFICIENT_SCOPE = new InsufficientScope()
const UNKNOWN_PAYMENT_METHOD = new NotFound({ resource: "payment_method" })

/** An operation with its decoders, compiled once. */
interface CompiledOperation {
  readonly operation: Operation
  readonly decodeBody: ((input: unknown) => Effect.Effect<unknown, DomainError>) | undefined
  readonly decodeParams: ((input: unknown) => Option.Option<unknown>) | undefined
  /** The operation's use case: `operation.run` itself, or wrapped in a span named by its id when tracing. */
  readonly run: Operation["run"]
}

type Endpoint =
  | { readonly kind: "operation"; readonly compiled: CompiledOperation }
  /** A fixed document (openapi.json, the API reference page and its files); undefined when there is none. */
  | { readonly kind: "file"; readonly file: (params: Readonly<Record<string, string>>) => StaticAsset | undefined }

/** What answered a request, and the route template it matched (for the log line). */
interface Answer {
  readonly response: HttpResponse
  readonly template?: string
}

const header = (request: HttpRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : value?.[0]
}

const normalisePrefix = (prefix: string): string => (prefix.endsWith("/") ? prefix.slice(0, -1) : prefix)

const refuse = (problem: Problem): Effect.Effect<never, Refusal> => Effect.fail(new Refusal({ problem }))

/** A readiness probe while the host drains (`HttpHandlerOptions.isDraining`). */
const DRAINING = refuse(problems.draining())

const principalKey = (principal: Principal): string =>
  principal._tag === "User" ? `user:${principal.userId}` : `client:${principal.clientId}`

/**
 * The first transfer coding other than `chunked` (RFC 9112 6.1: a server answers 501 to one it does not implement),
 * or undefined; the body is never read as if the coding were not there (docs/api.md, "Precise rules").
 */
const unimplementedTransferCoding = (transferEncoding: string | undefined): string | undefined => {
  if (transferEncoding === undefined || transferEncoding.toLowerCase() === "chunked") return undefined
  for (const coding of transferEncoding.split(",")) {
    const name = coding.trim().toLowerCase()
    if (name !== "chunked") return name.slice(0, 64)
  }
  return undefined
}

/** docs/api.md, "Precise rules": a chunked request has a body; otherwise only a positive Content-Length does. */
const declaresBody = (request: HttpRequest): boolean => {
  if (header(request, "transfer-encoding") !== undefined) return true
  const length = header(request, "content-length")
  return length !== undefined && Number(length) > 0
}

/**
 * Builds the transport-neutral handler: a plain request in, a plain response out. Routing, the order of checks,
 * problem bodies and the common headers are all decided here, so that every adapter answers byte for byte alike.
 */
export const makeHttpHandler = (options: HttpHandlerOptions): HttpHandler => {
  const prefix = normalisePrefix(options.prefix ?? DEFAULT_PREFIX)
  const limit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  const maxPathLength = options.maxPathLength ?? DEFAULT_MAX_PATH_LENGTH
  const rateLimit = options.rateLimit
  const runtime = options.runtime
  const tracing = options.tracing
  const route = compileRoutes(options)
  const knownSegments = new Set(
    [prefix, ...apiRoutes.map((api) => api.path), "/openapi.json", "/docs"].flatMap((path) => path.split("/"))
  )
  const onRequest = options.onRequest

  /**
   * The order of checks (docs/api.md, "Errors": order of checks), one early return each: routing (414, 404, OPTIONS, 405)
   * and fixed documents are answered here; an operation runs as one program (`operationProgram`).
   */
  const handle = (
    request: HttpRequest,
    respond: Responder,
    trace: RequestTrace | undefined
  ): Answer | Promise<Answer> => {
    const path = request.path
    if (path.length > maxPathLength) return { response: respond.problem(problems.uriTooLong(maxPathLength)) }
    const inPrefix =
      path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 0x2f)
    const match = inPrefix ? route(path.slice(prefix.length)) : undefined
    if (match === undefined) return { response: respond.problem(problems.notFound()) }
    const template = prefix + match.route.template
    if (request.method === "OPTIONS") return { response: respond.empty(204, { allow: match.route.allow }), template }
    const endpoint = match.route.endpoints.get(request.method === "HEAD" ? "GET" : request.method)
    if (endpoint === undefined) {
      return { response: respond.problem(problems.methodNotAllowed(match.route.allow)), template }
    }
    if (endpoint.kind === "file") {
      const file = endpoint.file(match.params)
      const response =
        file === undefined
          ? respond.problem(problems.notFound())
          : respond.ok(200, file.contentType, file.body, file.cacheControl)
      return { response, template }
    }
    const { operation } = endpoint.compiled
    const toAnswer = (exit: Exit.Exit<Result.Result<unknown, Refusal | DomainError>, unknown>): Answer => {
      if (Exit.isFailure(exit)) {
        // Interrupted, not failed: the host is disposing the runtime (a drain's end), so the answer is the drain's
        // 503, not a 500 with an "internal error" behind it (docs/api.md, "Probes").
        if (Cause.hasInterruptsOnly(exit.cause)) return { response: respond.problem(problems.draining()), template }
        throw Cause.squash(exit.cause)
      }
      const result = exit.value
      if (Result.isSuccess(result)) {
        return { response: respond.ok(operation.success.status, JSON_TYPE, JSON.stringify(result.success)), template }
      }
      const failure = result.failure
      return { response: respond.problem(failure._tag === "Refusal" ? failure.problem : problemOf(failure)), template }
    }
    const program = Effect.result(operationProgram(endpoint.compiled, request, match.params))
    const exit = runNow(
      trace === undefined ? program : Effect.withParentSpan(program, trace.serverSpan(template), NO_STACK_TRACE)
    )
    return exit instanceof Promise ? exit.then(toAnswer) : toAnswer(exit)
  }

  /**
   * Draining (503, the readiness probe only), credentials (401), access (429, 403), body (415, 413, 400), decoding
   * (400, 404), then the use case: each step a named function, chained with flatMap rather than written as a generator (the faster form of the same program:
   * 8.9 against 10.7 us per PUT language in the handler micro benchmark, and a 401 at 1.9 us, not 10.7).
   */
  const operationProgram = (
    compiled: CompiledOperation,
    request: HttpRequest,
    params: Readonly<Record<string, string>>
  ): Effect.Effect<unknown, Refusal | DomainError, AccordServices> =>
    compiled.operation.unavailableWhileDraining && options.isDraining?.() === true
      ? DRAINING
      : Effect.flatMap(authenticate(compiled.operation, request), (caller) =>
          // Without a limiter (or a caller) nothing waits here: the program stays synchronous (see `runNow`).
          rateLimit === undefined || caller === undefined
            ? authorized(compiled, request, params, caller)
            : Effect.flatMap(limitRate(rateLimit, caller), () => authorized(compiled, request, params, caller))
        )

  /** 429 past the credential's rate limit; the limiter never rejects (docs/api.md, "Rate limit"). */
  const limitRate = (limiter: RateLimiter, caller: Principal): Effect.Effect<void, Refusal> =>
    Effect.flatMap(
      Effect.promise(() => limiter.consume(principalKey(caller))),
      (waitSeconds) => (waitSeconds > 0 ? refuse(problems.rateLimited(waitSeconds)) : Effect.void)
    )

  /** 403 for an application credential on a user operation, then the body, its decoding and the use case. */
  const authorized = (
    compiled: CompiledOperation,
    request: HttpRequest,
    params: Readonly<Record<string, string>>,
    caller: Principal | undefined
  ): Effect.Effect<unknown, Refusal | DomainError, AccordServices> => {
    if (caller !== undefined && compiled.operation.access === "user" && caller._tag !== "User") {
      return Effect.fail(INSUFFICIENT_SCOPE)
    }
    return Effect.flatMap(readJsonBody(compiled.operation, request), (json) =>
      Effect.flatMap(decodeInput(compiled, json, params), (input) => compiled.run(caller, input))
    )
  }

  /** 401 for a missing, malformed or unknown credential; none is needed for a public operation. */
  const authenticate = (
    operation: Operation,
    request: HttpRequest
  ): Effect.Effect<Principal | undefined, DomainError, AccordServices> => {
    if (operation.access === "public") return NO_CALLER
    // A single-value header: more than one is refused, never a pick (docs/api.md, "Authentication").
    const authorization = request.headers["authorization"]
    if (Array.isArray(authorization) && authorization.length > 1) return INVALID_CREDENTIAL
    const credential = readCredential(header(request, "authorization"))
    if (credential._tag === "Missing") return MISSING_CREDENTIAL
    if (credential._tag === "Malformed") return INVALID_CREDENTIAL
    return Authenticator.use((authenticator) => authenticator.authenticate(credential.token))
  }

  /** The body decoded with the operation's Schema (400), then the path parameters (404 when they do not decode). */
  const decodeInput = (
    { decodeBody, decodeParams }: CompiledOperation,
    json: unknown,
    params: Readonly<Record<string, string>>
  ): Effect.Effect<{ readonly body: unknown; readonly params: unknown }, DomainError> => {
    const body = decodeBody === undefined ? NO_BODY : decodeBody(json)
    if (decodeParams === undefined) return Effect.map(body, (decoded) => ({ body: decoded, params: undefined }))
    return Effect.flatMap(body, (decoded) => {
      const decodedParams = decodeParams(params)
      return Option.isSome(decodedParams)
        ? Effect.succeed({ body: decoded, params: decodedParams.value })
        : Effect.fail(UNKNOWN_PAYMENT_METHOD)
    })
  }

  /**
   * The body as JSON, or undefined when the operation reads none: what the headers decide first (501 for a transfer
   * coding other than chunked, 415, declared size 413), then the bytes (size as read 413, syntax 400 `invalid_json`, not an object 400 `invalid_body`).
   */
  const readJsonBody = (operation: Operation, request: HttpRequest): Effect.Effect<unknown, Refusal> => {
    if (operation.body === undefined) return Effect.void
    const read = request.readBody
    if (!declaresBody(request) || read === undefined) return noBody(operation)
    const coding = unimplementedTransferCoding(header(request, "transfer-encoding"))
    if (coding !== undefined) return refuse(problems.transferCodingNotImplemented(coding))
    if (!isJsonMediaType(header(request, "content-type"))) return refuse(problems.unsupportedMediaType())
    if (Number(header(request, "content-length") ?? 0) > limit) return refuse(problems.payloadTooLarge(limit))
    // A small body usually came with the headers: taken at once, with no wait (see HttpRequest.readBodyNow).
    const arrived = request.readBodyNow?.(limit)
    if (arrived !== undefined) return parseJsonBody(operation, arrived)
    return Effect.flatMap(
      Effect.promise(() => read(limit)),
      (result) => parseJsonBody(operation, result)
    )
  }

  const parseJsonBody = (operation: Operation, result: BodyReadResult): Effect.Effect<unknown, Refusal> => {
    if (result._tag === "TooLarge") return refuse(problems.payloadTooLarge(limit))
    if (result._tag === "Aborted") return refuse(problems.invalidJson("The body could not be read."))
    // Already answered 408 by the server; this answer is only logged, with the status the client got.
    if (result._tag === "TimedOut") return refuse(problems.requestTimeout())
    if (result.bytes.length === 0) return noBody(operation)
    const parsed = readJson(result.bytes)
    if (!parsed.ok) return refuse(problems.invalidJson(parsed.detail))
    return isJsonObject(parsed.value) ? Effect.succeed(parsed.value) : refuse(problems.invalidBody())
  }

  /** No body: 400 where one is required, else the same as `{}` (docs/api.md, "Precise rules"). */
  const noBody = (operation: Operation): Effect.Effect<unknown, Refusal> =>
    operation.body?.required === true ? refuse(problems.bodyRequired()) : Effect.succeed({})

  /**
   * Runs a program with no scheduler hop: effect 4 starts a fiber synchronously, so a program that waits for
   * nothing (store-memory, a body that came with the headers) has its exit at once; otherwise it is awaited.
   */
  const runNow = <A>(
    program: Effect.Effect<A, never, AccordServices>
  ): Exit.Exit<A, unknown> | Promise<Exit.Exit<A, unknown>> => {
    const fiber = runtime.runFork(program)
    const exit = fiber.pollUnsafe()
    if (exit !== undefined) return exit
    return new Promise((resolve) => fiber.addObserver(resolve))
  }

  /**
   * One request, answered and logged. `trace` is made per request only when tracing: the server span, timed from the
   * request's start but made once the route is known (its name carries the template; docs/operations.md, "Traces"),
   * and ended with the answer.
   */
  const serve = (request: HttpRequest, trace: RequestTrace | undefined): Promise<HttpResponse> => {
    const started = performance.now()
    const incomingId = header(request, "x-request-id")
    const requestId = incomingId !== undefined && REQUEST_ID.test(incomingId) ? incomingId : crypto.randomUUID()
    const respond = responder(requestId, request.method === "HEAD")
    const internalError = (cause: unknown): Answer => {
      options.onInternalError?.(requestId, cause)
      return { response: respond.problem(problems.internal()) }
    }
    const finish = (answer: Answer): HttpResponse => {
      const status = answer.response.status
      const path = answer.template === undefined ? loggedPath(request.path, knownSegments) : undefined
      const log: RequestLog =
        trace === undefined
          ? {
              requestId,
              method: request.method,
              route: answer.template,
              path,
              status,
              durationMs: performance.now() - started
            }
          : {
              requestId,
              method: request.method,
              route: answer.template,
              path,
              status,
              durationMs: performance.now() - started,
              traceId: trace.end(answer.template, status)
            }
      options.onResponse?.(log)
      return answer.response
    }
    // Only a host's own callback (onRequest, onResponse, onInternalError) throwing makes the promise reject.
    try {
      onRequest?.()
      let pending: Answer | Promise<Answer>
      try {
        pending = handle(request, respond, trace)
      } catch (cause) {
        pending = internalError(cause)
      }
      if (pending instanceof Promise) return pending.then(finish, (cause: unknown) => finish(internalError(cause)))
      return Promise.resolve(finish(pending))
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)))
    }
  }

  if (tracing === undefined) return (request) => serve(request, undefined)
  const clock = Clock.Clock.defaultValue()
  return (request) => serve(request, traceRequest(tracing, clock, request))
}

// Spans made here point at nothing useful in a stack (the handler, not the caller), so none is captured.
const NO_STACK_TRACE = { captureStackTrace: false } as const

/** The server span of one traced request. */
interface RequestTrace {
  /** The span, made on the first call with the matched route's template. */
  readonly serverSpan: (template: string | undefined) => Tracer.Span
  /** Ends the span with the answer's status (an error from 500 up); returns its trace id, for the log line. */
  readonly end: (template: string | undefined, status: number) => string
}

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
 * the method, the route, the path (only of a matched route: a path nothing matched may be anything a client typed,
 * credentials included, docs/SECURITY.md item 2), a well-formed Host and the status; no other header value, never the query.
 */
const traceRequest = (tracing: HttpTracing, clock: Clock.Clock, request: HttpRequest): RequestTrace => {
  const startTime = clock.currentTimeNanosUnsafe()
  let span: Tracer.Span | undefined
  const serverSpan = (template: string | undefined): Tracer.Span => {
    if (span !== undefined) return span
    const method = methodLabel(request.method)
    const known = method !== OTHER_METHOD
    const prefix = known ? request.method : "HTTP"
    const parent = tracing.remoteParent(request.headers)
    span = tracing.tracer.span({
      name: template === undefined ? prefix : `${prefix} ${template}`,
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
    if (template !== undefined) {
      span.attribute("http.route", template)
      span.attribute("url.path", request.path)
    }
    const server = serverAddress(header(request, "host"))
    if (server !== undefined) {
      span.attribute("server.address", server.address)
      if (server.port !== undefined) span.attribute("server.port", server.port)
    }
    return span
  }
  const end = (template: string | undefined, status: number): string => {
    const ended = serverSpan(template)
    ended.attribute("http.response.status_code", status)
    if (status >= 500) ended.attribute("error.type", String(status))
    ended.end(clock.currentTimeNanosUnsafe(), status >= 500 ? Exit.fail(`HTTP ${status}`) : Exit.void)
    return ended.traceId
  }
  return { serverSpan, end }
}

/** The route table compiled for this handler: the operations, the OpenAPI document and the API reference's files. */
const compileRoutes = (options: HttpHandlerOptions) => {
  const prefix = normalisePrefix(options.prefix ?? DEFAULT_PREFIX)
  const docs = options.docs ?? new Map<string, StaticAsset>()
  let openApi: StaticAsset | undefined
  const openApiDocument = (): StaticAsset =>
    (openApi ??= {
      contentType: JSON_TYPE,
      body: new TextEncoder().encode(JSON.stringify(makeOpenApiDocument({ serverUrl: prefix })))
    })
  const fileEndpoint = (file: (params: Readonly<Record<string, string>>) => StaticAsset | undefined) =>
    new Map<string, Endpoint>([["GET", { kind: "file", file }]])
  return compileRouter<Endpoint>([
    ...apiRoutes.map((api) => ({
      path: api.path,
      exact: api.exact,
      endpoints: new Map(
        api.operations.map((operation): [string, Endpoint] => [
          operation.method,
          { kind: "operation", compiled: compileOperation(operation, options.tracing !== undefined) }
        ])
      )
    })),
    { path: "/openapi.json", exact: true, endpoints: fileEndpoint(openApiDocument) },
    { path: "/docs", exact: true, endpoints: fileEndpoint(() => docs.get("index.html")) },
    { path: "/docs/{asset}", exact: true, endpoints: fileEndpoint(({ asset = "" }) => docs.get(asset)) }
  ])
}

/** The use case's span is named by the operation id (`createPublicPlanEntry`), a child of the server span. */
const compileOperation = (operation: Operation, traced: boolean): CompiledOperation => ({
  operation,
  decodeBody: operation.body === undefined ? undefined : decoderFor(operation.body.schema),
  decodeParams: operation.params === undefined ? undefined : Schema.decodeUnknownOption(operation.params),
  run: traced
    ? (caller, input) => Effect.withSpan(operation.run(caller, input), operation.operationId, NO_STACK_TRACE)
    : operation.run
})

interface Responder {
  /** `cacheControl` only for a static file that sets its own (docs/api.md, "Headers on every response"). */
  readonly ok: (status: number, contentType: string, body: string | Uint8Array, cacheControl?: string) => HttpResponse
  readonly empty: (status: number, extra: Readonly<Record<string, string>>) => HttpResponse
  readonly problem: (problem: Problem) => HttpResponse
}

/** Responses with the common headers (docs/api.md, "Headers on every response"); HEAD gets the same without a body. */
const responder = (requestId: string, isHead: boolean): Responder => {
  const respond = (
    status: number,
    contentType: string | undefined,
    body: string | Uint8Array | undefined,
    extra?: Readonly<Record<string, string>>,
    cacheControl = "no-store"
  ): HttpResponse => {
    // Built field by field (no spreads): the order is the header order on the wire.
    const headers: Record<string, string> = {}
    if (contentType !== undefined) headers["content-type"] = contentType
    headers["cache-control"] = cacheControl
    headers["x-content-type-options"] = "nosniff"
    headers["x-request-id"] = requestId
    if (extra !== undefined) Object.assign(headers, extra)
    return { status, headers, body: isHead ? undefined : body }
  }
  return {
    ok: (status, contentType, body, cacheControl) => respond(status, contentType, body, undefined, cacheControl),
    empty: (status, extra) => respond(status, undefined, undefined, extra),
    problem: (problem) => respond(problem.status, PROBLEM_CONTENT_TYPE, problemBody(problem), problem.headers)
  }
}
