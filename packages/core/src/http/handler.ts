import { PROBLEMS, type Operation } from "@accord/contract"
import { Authenticator, InsufficientScope, Unauthenticated } from "@accord/domain"
import type { AccordServices, DomainError, Principal } from "@accord/domain"
import { Cause, Effect, Exit, Result, type Tracer } from "effect"
import { accordImplementations } from "../implementations.js"
import { withAccessLog } from "./access-log.js"
import { readCredential } from "./authorization.js"
import { entityTagOf, ifNoneMatchMatches, readEntityTagCondition } from "./conditional.js"
import { corsOriginOf, isPreflight, preflightHeaders } from "./cors.js"
import { credentialKind } from "./deprecation.js"
import { compileEndpoints, NO_STACK_TRACE, type Endpoints } from "./endpoints.js"
import { bindRoutes } from "./implementation.js"
import { negotiateStream } from "./accept.js"
import { eventStreamBody, STREAM_PAGE, StreamCounts } from "./event-stream.js"
import { accordStreamImplementations } from "../implementations.js"
import { headerValue } from "./header-value.js"
import { problem } from "./problem.js"
import { rateLimitHeaders, type RateLimiter } from "./rate-limit.js"
import { bodyHeadersRefusal, header, jsonBody, sentBody, type JsonBody } from "./request-body.js"
import { Responder, type NeutralHandler, type Reply } from "./reply.js"
import { withServerSpan } from "./server-span.js"
import { newRequestId } from "./request-id.js"
import type {
  AccordRuntime,
  BodyReadResult,
  EagerHttpHandler,
  HttpHandler,
  HttpHandlerOptions,
  HttpRequest
} from "./types.js"

export const DEFAULT_PREFIX = "/api"
export const DEFAULT_BODY_LIMIT = 16_384
export const DEFAULT_MAX_PATH_LENGTH = 2048

const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

// The pipeline's own answers carry no per-request data, so each is made once (an error's stack costs microseconds).
const NO_CALLER = Effect.succeed(undefined)
const MISSING_CREDENTIAL = Effect.fail(new Unauthenticated({ reason: "missing" }))
const INVALID_CREDENTIAL = Effect.fail(new Unauthenticated({ reason: "invalid_token" }))
const FORBIDDEN = new InsufficientScope()
const DRAINING = problem("unavailable", PROBLEMS.unavailable.detail.draining, { "retry-after": "1" })
const NOTHING_READ: BodyReadResult = { _tag: "Read", bytes: new Uint8Array(0) }
const NO_JSON: JsonBody = { ok: true, json: undefined }
const NO_INPUT: Result.Result<undefined> = Result.succeed(undefined)
const NO_HEADERS: Readonly<Record<string, string>> = {}
const PRECONDITION_REQUIRED = problem("precondition_required")
const NOT_FOUND = problem("not_found")
const INTERNAL = problem("internal")
const NOT_ACCEPTABLE = problem("not_acceptable")
const TOO_MANY_STREAMS = problem("too_many_streams", undefined, { "retry-after": "5" })
const STREAMS_FULL = problem("unavailable", PROBLEMS.unavailable.detail.streams, { "retry-after": "5" })
const rateLimited = (waitSeconds: number) => problem("rate_limited", undefined, { "retry-after": String(waitSeconds) })

const isWrite = (operation: Operation): boolean =>
  operation.conditional === "ifMatch" || operation.conditional === "ifMatchRequirable"

/** 401 for a missing, malformed or unknown credential; none is needed for a public operation. */
const authenticate = (
  operation: Operation,
  request: HttpRequest
): Effect.Effect<Principal | undefined, DomainError, AccordServices> => {
  if (operation.access === "public") return NO_CALLER
  // A single-value header: more than one is refused, never a pick (docs/api.md, "Authentication").
  const authorization = headerValue(request.headers, "authorization")
  if (Array.isArray(authorization) && authorization.length > 1) return INVALID_CREDENTIAL
  const credential = readCredential(header(request, "authorization"))
  if (credential._tag === "Missing") return MISSING_CREDENTIAL
  if (credential._tag === "Malformed") return INVALID_CREDENTIAL
  return Authenticator.use((authenticator) => authenticator.authenticate(credential.token))
}

/** No wait, no rate-limit headers: no limiter, a public operation, or a limiter that cannot tell its quota. */
const NOT_LIMITED: RateLimitStep = { waitSeconds: 0, headers: undefined }
const NO_LIMIT = Effect.succeed(NOT_LIMITED)

interface RateLimitStep {
  readonly waitSeconds: number
  /** `RateLimit-Policy` and `RateLimit`, for every answer from here on (docs/api.md, "Rate limit"). */
  readonly headers: Readonly<Record<string, string>> | undefined
}

/** A credential's key: its rate limit's and its streams' count. */
const credentialKey = (caller: Principal): string =>
  caller._tag === "User" ? `user:${caller.userId}` : `client:${caller.clientId}`

/** The seconds the caller's credential must wait, 0 to go on (docs/api.md, "Rate limit"); the limiter never rejects. */
const rateLimitStep = (
  limiter: RateLimiter | undefined,
  caller: Principal | undefined
): Effect.Effect<RateLimitStep> => {
  if (limiter === undefined || caller === undefined) return NO_LIMIT
  const key = credentialKey(caller)
  const { consumeQuota, policy } = limiter
  if (consumeQuota === undefined || policy === undefined)
    return Effect.promise(() => limiter.consume(key).then((waitSeconds) => ({ waitSeconds, headers: undefined })))
  return Effect.promise(() =>
    consumeQuota(key).then((quota) =>
      typeof quota === "number"
        ? { waitSeconds: quota, headers: undefined }
        : { waitSeconds: quota.waitSeconds, headers: rateLimitHeaders(policy, quota) }
    )
  )
}

/** The body's bytes, for a reader that has not got them all yet (`readBody` called as the request's method). */
const awaitBody = (request: HttpRequest, limit: number): Effect.Effect<BodyReadResult> =>
  Effect.promise(() => request.readBody?.(limit) ?? Promise.resolve(NOTHING_READ))

/**
 * Runs a program with no scheduler hop. A program that is already an exit (`Effect.fnUntracedEager` decided it
 * without a port) needs no fiber; effect 4 starts a fiber synchronously, so one that waits for nothing
 * (store-memory, a body that came with the headers) has its exit at once; otherwise it is awaited. `parent`: the
 * span the program's spans join.
 */
const runNow = <A>(
  runtime: AccordRuntime,
  program: Effect.Effect<A, never, AccordServices>,
  parent: Tracer.AnySpan | undefined
): Exit.Exit<A, unknown> | Promise<Exit.Exit<A, unknown>> => {
  // An Effect<A, never> that is an exit is an Exit<A, never>; the guard only knows it is some exit.
  if (Exit.isExit(program)) return program as Exit.Exit<A, never>
  const fiber = runtime.runFork(parent === undefined ? program : Effect.withParentSpan(program, parent, NO_STACK_TRACE))
  const exit = fiber.pollUnsafe()
  if (exit !== undefined) return exit
  return new Promise((resolve) => fiber.addObserver(resolve))
}

/** The neutral handler: the order of checks, one function, and the 500 for whatever it did not expect. */
const neutralHandler = (
  options: HttpHandlerOptions,
  endpoints: Endpoints,
  maxPathLength: number,
  routeOf: (request: HttpRequest) => string | undefined
): NeutralHandler => {
  const { runtime, rateLimit, isDraining, onInternalError, onDeprecatedCall } = options
  const requireIfMatch = options.requireIfMatch === true
  const limit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  const corsOn = options.corsOrigins !== undefined
  const corsOrigin = corsOriginOf(options.corsOrigins)
  const uriTooLong = problem("uri_too_long", PROBLEMS.uri_too_long.detail.overLimit(maxPathLength))
  const streams = new StreamCounts(options.eventStreams)

  /**
   * The order of checks (docs/api.md, "Errors"), one early return each. Run eagerly: the checks before the first port
   * it must ask (the authenticator, the use case) run at once, without a fiber, so a route's answer or the refusal of a
   * missing credential is an exit at once; the rest runs as one program, which completes synchronously unless a port
   * or the body makes it wait (`runNow`). The generator is made once, here: one made per request (`Effect.gen` inside
   * the handler) cost 17% more CPU per PUT language and 49% more per 401 than the former flatMap chain in an in-process
   * A/B; this form costs about 5% more per PUT (8.5 against 8.1 us) and 4% less per 401 (1.45 against 1.51 us).
   */
  const checks = Effect.fnUntracedEager(function* (request: HttpRequest, responder: Responder) {
    let respond = responder
    if (request.path.length > maxPathLength) return respond.problem(uriTooLong) // 414
    const match = endpoints.match(request.path)
    if (match === undefined) return respond.problem(NOT_FOUND) // 404
    const { template: route, allow, endpoints: methods } = match.route
    if (request.method === "OPTIONS") {
      if (!isPreflight(request)) return respond.empty(204, { allow }, route) // 204
      const preflight = respond.cors
        ? preflightHeaders(request, allow, (method) => methods.has(method === "HEAD" ? "GET" : method))
        : undefined
      if (preflight === undefined) return respond.withoutCors().empty(204, { allow }, route) // 204, no CORS
      return respond.empty(204, preflight, route) // 204, CORS preflight
    }
    const endpoint = methods.get(request.method === "HEAD" ? "GET" : request.method)
    if (endpoint === undefined) return respond.problem(problem("method_not_allowed", undefined, { allow }), route) // 405
    if (endpoint.kind === "file") return respond.file(endpoint.file(match.params), route, request.headers) // 200, 304, 404
    const { operation, decodeBody, decodeParams, decodeQuery, run, deprecation } = endpoint.compiled
    // A deprecated path: its headers on every answer from here on; past its sunset, 410 (docs/api.md, "Versioning").
    if (deprecation !== undefined) {
      respond = respond.withHeaders(deprecation.headers(match.params))
      if (Date.now() >= deprecation.sunsetMs) {
        onDeprecatedCall?.({ route, operationId: operation.operationId, credential: "unchecked", gone: true })
        return respond.problem(deprecation.gone(match.params), route) // 410
      }
    }
    if (operation.unavailableWhileDraining && isDraining?.() === true) return respond.problem(DRAINING, route) // 503
    const caller = yield* Effect.result(authenticate(operation, request))
    if (deprecation !== undefined && onDeprecatedCall !== undefined) {
      const credential = credentialKind(Result.isSuccess(caller) ? caller.success : undefined, Result.isFailure(caller))
      onDeprecatedCall({ route, operationId: operation.operationId, credential, gone: false })
    }
    if (Result.isFailure(caller)) return respond.error(caller.failure, route) // 401
    // No step of the fiber when there is no limiter to ask (most servers): its answer is known.
    const limited = rateLimit === undefined ? NOT_LIMITED : yield* rateLimitStep(rateLimit, caller.success)
    // Every answer from here on carries the quota the limiter told (docs/api.md, "Rate limit").
    if (limited.headers !== undefined) respond = respond.withHeaders(limited.headers)
    if (limited.waitSeconds > 0) return respond.problem(rateLimited(limited.waitSeconds), route) // 429
    if (operation.access === "user" && caller.success?._tag !== "User") return respond.error(FORBIDDEN, route) // 403
    // An operation that also streams answers what Accept asks for (docs/api.md, "Events"); others ignore Accept.
    const { streamed } = operation
    const wants = streamed === undefined ? "json" : negotiateStream(request.headers)
    if (wants === "none") return respond.problem(NOT_ACCEPTABLE, route) // 406
    // A conditional write's If-Match, checked by the use case in the same atomic step as its write (412).
    const ifMatch = isWrite(operation) ? readEntityTagCondition(headerValue(request.headers, "if-match")) : undefined
    if (ifMatch === undefined && requireIfMatch && operation.conditional === "ifMatchRequirable")
      return respond.problem(PRECONDITION_REQUIRED, route) // 428
    // The body, unread until here (docs/api.md, "Precise rules"): what its headers declare, then its bytes.
    const sent = operation.body !== undefined && sentBody(request)
    const refused = sent ? bodyHeadersRefusal(request, limit) : undefined
    if (refused !== undefined) return respond.problem(refused, route) // 501, 415, 413
    // A small body usually came with the headers: taken at once, with no wait (see HttpRequest.readBodyNow).
    const bytes = !sent ? NOTHING_READ : (request.readBodyNow?.(limit) ?? (yield* awaitBody(request, limit)))
    const json = operation.body === undefined ? NO_JSON : jsonBody(bytes, operation.body, limit)
    if (!json.ok) return respond.problem(json.problem, route) // 413, 400 invalid_json or invalid_body
    const body = decodeBody === undefined ? NO_INPUT : decodeBody(json.json)
    if (Result.isFailure(body)) return respond.error(body.failure, route) // 400 validation_failed
    const params = decodeParams === undefined ? NO_INPUT : decodeParams(match.params)
    if (Result.isFailure(params)) return respond.error(params.failure, route) // 404, as its Schema declares
    const query = decodeQuery === undefined ? NO_INPUT : decodeQuery(request.query)
    if (Result.isFailure(query)) return respond.problem(query.failure, route) // 400 invalid_query
    if (wants === "stream" && streamed !== undefined && operation.stream !== undefined && request.method === "GET") {
      // The resume point: Last-Event-ID, decoded as the query parameter it stands for, else that parameter.
      const parameter = operation.stream.resumeParameter
      const lastEventId = header(request, "last-event-id")
      const resume =
        lastEventId === undefined || lastEventId === ""
          ? query
          : (decodeQuery?.(`${parameter}=${encodeURIComponent(lastEventId)}`) ?? query)
      if (Result.isFailure(resume)) return respond.problem(resume.failure, route) // 400 invalid_query
      const after = (resume.success as Readonly<Record<string, string | undefined>> | undefined)?.[parameter]
      // The first page is read before the head: an unknown resume point is a 400, not an empty stream.
      const first = yield* Effect.result(streamed.page(caller.success, after, STREAM_PAGE))
      if (Result.isFailure(first)) return respond.error(first.failure, route) // 400 invalid_cursor, 503
      const key = caller.success === undefined ? "" : credentialKey(caller.success)
      const refusal = streams.refusal(key)
      if (refusal === "credential") return respond.problem(TOO_MANY_STREAMS, route) // 429
      if (refusal === "total") return respond.problem(STREAMS_FULL, route) // 503
      if (isDraining?.() === true) return respond.problem(DRAINING, route) // 503: it would end at once
      streams.open(key)
      options.eventStreams?.onOpenChange?.(1)
      const body = eventStreamBody({
        runtime,
        source: streamed,
        caller: caller.success,
        after,
        first: first.success,
        options: options.eventStreams,
        drainStarted: options.drainStarted,
        onEnd: () => {
          streams.close(key)
          options.eventStreams?.onOpenChange?.(-1)
        }
      })
      return respond.stream(body, route) // 200 text/event-stream
    }
    const input = { body: body.success, params: params.success, query: query.success, ifMatch }
    const result = yield* Effect.result(run(caller.success, input))
    if (Result.isFailure(result)) return respond.error(result.failure, route) // the use case's declared errors, 412
    if (operation.success.schema === undefined) return respond.empty(204, NO_HEADERS, route) // 204, no body
    if (operation.conditional === undefined) return respond.json(operation.success.status, result.success, route) // 200, 201
    // A conditional operation's 200 carries the strong ETag of its exact bytes (docs/api.md, "Conditional requests").
    const text = JSON.stringify(result.success)
    const etag = entityTagOf(text)
    if (operation.conditional === "ifNoneMatch") {
      const ifNoneMatch = readEntityTagCondition(headerValue(request.headers, "if-none-match"))
      if (ifNoneMatch !== undefined && ifNoneMatchMatches(ifNoneMatch, etag)) return respond.empty(304, { etag }, route) // 304
    }
    return respond.jsonWithEtag(operation.success.status, text, etag, route) // 200
  })

  /**
   * An exit's answer. Interrupted is the host disposing the runtime (a drain's end): the drain's 503, not a 500
   * (docs/api.md, "Probes"). Anything else is a defect, thrown for the 500.
   */
  const replyOf = (exit: Exit.Exit<Reply, unknown>, request: HttpRequest, respond: Responder): Reply => {
    if (Exit.isSuccess(exit)) return exit.value
    if (Cause.hasInterruptsOnly(exit.cause)) return respond.problem(DRAINING, routeOf(request))
    throw Cause.squash(exit.cause)
  }

  /** A 500 for what the handler did not expect, told to the host with the request id (one function, not one a request). */
  const internal = (respond: Responder, requestId: string, cause: unknown): Reply => {
    onInternalError?.(requestId, cause)
    return respond.problem(INTERNAL)
  }

  return (request, parent) => {
    const incomingId = header(request, "x-request-id")
    const requestId = incomingId !== undefined && REQUEST_ID.test(incomingId) ? incomingId : newRequestId()
    const respond = new Responder(requestId, request.method === "HEAD", corsOn, corsOrigin(request))
    try {
      const exit = runNow(runtime, checks(request, respond), parent)
      return exit instanceof Promise
        ? exit
            .then((exit) => replyOf(exit, request, respond))
            .catch((cause: unknown) => internal(respond, requestId, cause))
        : replyOf(exit, request, respond)
    } catch (cause) {
      return internal(respond, requestId, cause)
    }
  }
}

/**
 * Builds the transport-neutral handler, answering at once when nothing waited (`EagerHttpHandler`): routing, the order
 * of checks, problem bodies and the common headers are all decided here, so that every adapter answers byte for byte
 * alike. Tracing and the access log wrap the neutral handler; neither is threaded through it.
 */
export const makeEagerHttpHandler = (options: HttpHandlerOptions): EagerHttpHandler => {
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const maxPathLength = options.maxPathLength ?? DEFAULT_MAX_PATH_LENGTH
  const endpoints = compileEndpoints(
    prefix.endsWith("/") ? prefix.slice(0, -1) : prefix,
    bindRoutes(
      options.implementations ?? accordImplementations,
      options.streamImplementations ?? accordStreamImplementations
    ),
    options.docs ?? new Map(),
    options.tracing !== undefined,
    options.aliasDates
  )
  /** The route a request is answered under, known before its answer (a span's name) or without it (an interrupt's). */
  const routeOf = (request: HttpRequest): string | undefined =>
    request.path.length > maxPathLength ? undefined : endpoints.match(request.path)?.route.template
  const neutral = neutralHandler(options, endpoints, maxPathLength, routeOf)
  const traced = options.tracing === undefined ? neutral : withServerSpan(neutral, options.tracing, routeOf)
  return withAccessLog(traced, options, endpoints.knownSegments)
}

/** The transport-neutral handler: a plain request in, a promise of a plain response out (`makeEagerHttpHandler`). */
export const makeHttpHandler = (options: HttpHandlerOptions): HttpHandler => {
  const eager = makeEagerHttpHandler(options)
  return (request) => {
    try {
      const answer = eager(request)
      return answer instanceof Promise ? answer : Promise.resolve(answer)
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)))
    }
  }
}
