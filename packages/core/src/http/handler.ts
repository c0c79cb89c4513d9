import { Cause, Effect, Either, Exit, Runtime } from "effect"
import { Unauthenticated, InsufficientScope, type DomainError } from "../domain/errors.js"
import type { Principal } from "../domain/principal.js"
import { Authenticator } from "../ports/authenticator.js"
import { readCredential } from "./authorization.js"
import { docsPage, DOCS_INIT_SCRIPT } from "./docs-page.js"
import { isJsonObject, readJson } from "./json-body.js"
import { isJsonMediaType } from "./media-type.js"
import { makeOpenApiDocument } from "./openapi.js"
import { PROBLEM_CONTENT_TYPE, problemBody, problemOf, problems, type Problem } from "./problem.js"
import { makeRateLimiter } from "./rate-limit.js"
import { compileRouter } from "./router.js"
import { apiRoutes, type Operation, type OperationRequest } from "./routes.js"
import type { AccordRuntime, AccordServices, HttpHandler, HttpHandlerOptions, HttpRequest, HttpResponse } from "./types.js"

export const DEFAULT_PREFIX = "/api"
export const DEFAULT_BODY_LIMIT = 16_384
export const DEFAULT_MAX_PATH_LENGTH = 2048

const JSON_TYPE = "application/json; charset=utf-8"
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

type Endpoint =
  | { readonly kind: "operation"; readonly operation: Operation }
  /** A fixed document (openapi.json, the docs page and its files); undefined when the asset does not exist. */
  | { readonly kind: "static"; readonly respond: (params: Readonly<Record<string, string>>) => StaticFile | undefined }

interface StaticFile {
  readonly contentType: string
  readonly body: string | Uint8Array
}

const header = (request: HttpRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : value?.[0]
}

const pickRequestId = (incoming: string | undefined): string =>
  incoming !== undefined && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID()

const normalisePrefix = (prefix: string): string => (prefix.endsWith("/") ? prefix.slice(0, -1) : prefix)

/** CONTRACT: a chunked request has a body; otherwise only a positive Content-Length does. */
const declaresBody = (request: HttpRequest): boolean => {
  if (header(request, "transfer-encoding") !== undefined) return true
  const length = header(request, "content-length")
  return length !== undefined && Number(length) > 0
}

const MISSING_CREDENTIAL = problemOf(new Unauthenticated({ reason: "missing" }))
const INVALID_CREDENTIAL = problemOf(new Unauthenticated({ reason: "invalid_token" }))
const INSUFFICIENT_SCOPE = problemOf(new InsufficientScope())

/** A step's result: its value, or the problem that answers the request. */
type Outcome<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly problem: Problem }
type Program = Effect.Effect<unknown, DomainError, AccordServices>
/** Starts an operation's program once the caller is known. */
type Start = (input: OperationRequest) => Program

const NO_BODY: Outcome<unknown> = { ok: true, value: undefined }
const refuse = (problem: Problem): Outcome<never> => ({ ok: false, problem })

/**
 * Media type, then size, then JSON syntax, then "is an object": CONTRACT's order of checks for bodies. Plain code, no
 * Effect: these are HTTP-level refusals, and the only wait is the adapter's read of the bytes.
 */
const readBody = async (request: HttpRequest, limit: number): Promise<Outcome<unknown>> => {
  if (!declaresBody(request) || request.readBody === undefined) return NO_BODY
  if (!isJsonMediaType(header(request, "content-type"))) return refuse(problems.unsupportedMediaType())
  if (Number(header(request, "content-length") ?? 0) > limit) return refuse(problems.payloadTooLarge(limit))
  const result = await request.readBody(limit)
  if (result._tag === "TooLarge") return refuse(problems.payloadTooLarge(limit))
  if (result._tag === "Aborted") return refuse(problems.invalidJson("The body could not be read."))
  if (result.bytes.length === 0) return NO_BODY
  const parsed = readJson(result.bytes)
  if (!parsed.ok) return refuse(problems.invalidJson(parsed.detail))
  if (!isJsonObject(parsed.value)) return refuse(problems.invalidBody())
  return { ok: true, value: parsed.value }
}

const principalKey = (principal: Principal): string =>
  principal._tag === "User" ? `user:${principal.userId}` : `client:${principal.clientId}`

/**
 * Runs a program on the runtime without a scheduler hop when it can: synchronously to its end when nothing in it
 * waits (store-memory, a cached key set), else the fiber it started goes on and its exit is awaited (no re-run).
 */
const runExit = <A>(runtime: AccordRuntime, program: Effect.Effect<A, never, AccordServices>): Exit.Exit<A, unknown> | Promise<Exit.Exit<A, unknown>> => {
  const exit = runtime.runSyncExit(program)
  if (Exit.isFailure(exit) && Cause.isDieType(exit.cause) && Runtime.isAsyncFiberException(exit.cause.defect)) {
    const fiber = exit.cause.defect.fiber
    // The fiber runs `program`, so its exit has the program's types; the guard above only knows it is a fiber.
    return new Promise((resolve) => fiber.addObserver((fiberExit) => resolve(fiberExit as Exit.Exit<A, unknown>)))
  }
  return exit
}

/**
 * The program's value, or the problem for its domain error. Anything else (a defect, or the runtime's own layer
 * failing to build) is thrown, and answered as a 500.
 */
const outcomeOf = <A>(exit: Exit.Exit<Either.Either<A, DomainError>, unknown>): Outcome<A> => {
  if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
  const result = exit.value
  return Either.isRight(result) ? { ok: true, value: result.right } : { ok: false, problem: problemOf(result.left) }
}

/**
 * Builds the transport-neutral handler: a plain request in, a plain response out, with routing, the order of
 * checks, problem bodies and the common headers all decided here so that every adapter answers byte for byte alike.
 */
export const makeHttpHandler = (options: HttpHandlerOptions): HttpHandler => {
  const prefix = normalisePrefix(options.prefix ?? DEFAULT_PREFIX)
  const limit = options.bodyLimit ?? DEFAULT_BODY_LIMIT
  const runtime = options.runtime
  const maxPathLength = options.maxPathLength ?? DEFAULT_MAX_PATH_LENGTH
  const rateLimit = options.rateLimit === undefined ? undefined : makeRateLimiter(options.rateLimit)
  const docs = options.docs ?? new Map()
  let openApiJson: string | undefined
  const openApi = () => (openApiJson ??= JSON.stringify(makeOpenApiDocument({ serverUrl: prefix })))

  const staticEndpoint = (respond: Extract<Endpoint, { kind: "static" }>["respond"]): ReadonlyMap<string, Endpoint> =>
    new Map([["GET", { kind: "static", respond }]])
  const route = compileRouter<Endpoint>([
    ...apiRoutes.map((api) => ({
      path: api.path,
      exact: api.exact,
      endpoints: new Map(api.operations.map((operation): [string, Endpoint] => [operation.method, { kind: "operation", operation }]))
    })),
    { path: "/openapi.json", exact: true, endpoints: staticEndpoint(() => ({ contentType: JSON_TYPE, body: openApi() })) },
    { path: "/docs", exact: true, endpoints: staticEndpoint(() => ({ contentType: "text/html; charset=utf-8", body: docsPage })) },
    {
      path: "/docs/{asset}",
      exact: true,
      endpoints: staticEndpoint(({ asset = "" }) =>
        asset === "init.js" ? { contentType: "text/javascript; charset=utf-8", body: DOCS_INIT_SCRIPT } : docs.get(asset)
      )
    }
  ])

  const respond = (requestId: string, status: number, contentType: string | undefined, body: string | Uint8Array | undefined, extra?: Readonly<Record<string, string>>): HttpResponse => {
    // Built field by field (no spreads): this runs for every response, and the order is the header order on the wire.
    const headers: Record<string, string> = {}
    if (contentType !== undefined) headers["content-type"] = contentType
    headers["cache-control"] = "no-store"
    headers["x-content-type-options"] = "nosniff"
    headers["x-request-id"] = requestId
    if (extra !== undefined) Object.assign(headers, extra)
    return { status, headers, body }
  }
  const problemResponse = (requestId: string, problem: Problem, isHead: boolean): HttpResponse =>
    respond(requestId, problem.status, PROBLEM_CONTENT_TYPE, isHead ? undefined : problemBody(problem), problem.headers)

  const run = <A>(program: Effect.Effect<A, DomainError, AccordServices>): Outcome<A> | Promise<Outcome<A>> => {
    // Domain errors travel as values, so the failure channel holds only what is not the program's (see outcomeOf).
    const exit = runExit(runtime, Effect.either(program))
    return exit instanceof Promise ? exit.then(outcomeOf) : outcomeOf(exit)
  }

  /** After the authenticator: rate limit (429) and scope (403), then what the operation's program is started with. */
  const grant = (access: Exclude<Operation["access"], { kind: "none" }>, authenticated: Outcome<Principal>): Outcome<Start> => {
    if (!authenticated.ok) return authenticated
    const principal = authenticated.value
    const waitSeconds = rateLimit?.(principalKey(principal)) ?? 0
    if (waitSeconds > 0) return { ok: false, problem: problems.rateLimited(waitSeconds) }
    if (access.kind === "any") return { ok: true, value: (input) => access.run(principal, input) }
    if (principal._tag !== "User") return { ok: false, problem: INSUFFICIENT_SCOPE }
    return { ok: true, value: (input) => access.run(principal.userId, input) }
  }

  /** Credentials (401, 429, 403); a promise only when the authenticator really waits. */
  const authorise = (access: Operation["access"], request: HttpRequest): Outcome<Start> | Promise<Outcome<Start>> => {
    if (access.kind === "none") return { ok: true, value: access.run }
    const credential = readCredential(header(request, "authorization"))
    if (credential._tag === "Missing") return { ok: false, problem: MISSING_CREDENTIAL }
    if (credential._tag === "Malformed") return { ok: false, problem: INVALID_CREDENTIAL }
    const pending = run(Effect.flatMap(Authenticator, (authenticator) => authenticator.authenticate(credential.token)))
    return pending instanceof Promise ? pending.then((authenticated) => grant(access, authenticated)) : grant(access, pending)
  }

  /** The life of an API request after routing: credentials, then the body, then the use case. */
  const runOperation = async (operation: Operation, request: HttpRequest, params: OperationRequest["params"]): Promise<Outcome<unknown>> => {
    const pending = authorise(operation.access, request)
    const authorised = pending instanceof Promise ? await pending : pending
    if (!authorised.ok) return authorised
    let body: unknown = undefined
    if (operation.body !== undefined) {
      const read = await readBody(request, limit)
      if (!read.ok) return read
      if (read.value === undefined && operation.body.required) return { ok: false, problem: problems.bodyRequired() }
      body = read.value
    }
    return run(authorised.value({ params, body }))
  }

  interface Answer {
    readonly response: HttpResponse
    readonly template?: string
  }

  /** Routing (414, 404, OPTIONS, 405), static documents, and operations; a promise only for operations. */
  const answer = (request: HttpRequest, requestId: string): Answer | Promise<Answer> => {
    const isHead = request.method === "HEAD"
    const path = request.path
    if (path.length > maxPathLength) return { response: problemResponse(requestId, problems.uriTooLong(maxPathLength), isHead) }
    const inPrefix = path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 0x2f /* / */)
    const match = inPrefix ? route(path.slice(prefix.length)) : undefined
    if (match === undefined) return { response: problemResponse(requestId, problems.notFound(), isHead) }
    const template = prefix + match.route.template
    if (request.method === "OPTIONS") {
      return { response: respond(requestId, 204, undefined, undefined, { allow: match.route.allow }), template }
    }
    const endpoint = match.route.endpoints.get(isHead ? "GET" : request.method)
    if (endpoint === undefined) {
      return { response: problemResponse(requestId, problems.methodNotAllowed(match.route.allow), isHead), template }
    }
    if (endpoint.kind === "static") {
      const file = endpoint.respond(match.params)
      if (file === undefined) return { response: problemResponse(requestId, problems.notFound(), isHead), template }
      return { response: respond(requestId, 200, file.contentType, isHead ? undefined : file.body), template }
    }
    const operation = endpoint.operation
    return runOperation(operation, request, match.params).then((result): Answer => {
      if (!result.ok) return { response: problemResponse(requestId, result.problem, isHead), template }
      const body = isHead ? undefined : JSON.stringify(result.value)
      return { response: respond(requestId, operation.successStatus, JSON_TYPE, body), template }
    })
  }

  return async (request) => {
    const started = performance.now()
    const requestId = pickRequestId(header(request, "x-request-id"))
    let outcome: Answer
    try {
      const pending = answer(request, requestId)
      outcome = pending instanceof Promise ? await pending : pending
    } catch (cause) {
      options.onInternalError?.(requestId, cause)
      outcome = { response: problemResponse(requestId, problems.internal(), request.method === "HEAD") }
    }
    options.onResponse?.({
      requestId,
      method: request.method,
      route: outcome.template,
      status: outcome.response.status,
      durationMs: performance.now() - started
    })
    return outcome.response
  }
}
