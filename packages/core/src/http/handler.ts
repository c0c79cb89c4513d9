import { Cause, Effect, Exit, Result } from "effect"
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
import type {
  AccordRuntime,
  AccordServices,
  BodyReadResult,
  HttpHandler,
  HttpHandlerOptions,
  HttpRequest,
  HttpResponse
} from "./types.js"

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

/** A step's result: its value, or the problem that answers the request. */
type Outcome<A> = { readonly ok: true; readonly value: A } | { readonly ok: false; readonly problem: Problem }

const MISSING_CREDENTIAL_OUTCOME: Outcome<never> = {
  ok: false,
  problem: problemOf(new Unauthenticated({ reason: "missing" }))
}
const INVALID_CREDENTIAL_OUTCOME: Outcome<never> = {
  ok: false,
  problem: problemOf(new Unauthenticated({ reason: "invalid_token" }))
}
const INSUFFICIENT_SCOPE_OUTCOME: Outcome<never> = { ok: false, problem: problemOf(new InsufficientScope()) }
type Program = Effect.Effect<unknown, DomainError, AccordServices>
/** Starts an operation's program once the caller is known. */
type Start = (input: OperationRequest) => Program

/** The credentials passed and the body is still on its way: the use case starts once `read` has it. */
interface AwaitingBody {
  readonly start: Start
  readonly read: (limit: number) => Promise<BodyReadResult>
}
/** What a request's program ends with: the outcome, or (before any use case ran) waiting for the body. */
type StepResult = Outcome<unknown> | { readonly awaiting: AwaitingBody }
type Step = Effect.Effect<StepResult, DomainError, AccordServices>
const isAwaiting = (result: StepResult): result is { readonly awaiting: AwaitingBody } => "awaiting" in result

/** A program's outcome whose value is itself an outcome (a refusal decided inside the program). */
const settle = <A>(outcome: Outcome<Outcome<A>>): Outcome<A> => (outcome.ok ? outcome.value : outcome)

const NO_BODY: Outcome<unknown> = { ok: true, value: undefined }
const refuse = (problem: Problem): Outcome<never> => ({ ok: false, problem })
const succeed = <A>(value: A): Outcome<A> => ({ ok: true, value })

/**
 * What the headers alone decide about a body, in CONTRACT's order: none to read, or refused by media type (415) or
 * declared size (413). Undefined when the bytes must be read.
 */
const bodyByHeaders = (request: HttpRequest, limit: number): Outcome<unknown> | undefined => {
  if (!declaresBody(request) || request.readBody === undefined) return NO_BODY
  if (!isJsonMediaType(header(request, "content-type"))) return refuse(problems.unsupportedMediaType())
  if (Number(header(request, "content-length") ?? 0) > limit) return refuse(problems.payloadTooLarge(limit))
  return undefined
}

/** Then size as read (413), JSON syntax (400 invalid_json), and "is an object" (400 invalid_body). */
const parseBody = (result: BodyReadResult, limit: number): Outcome<unknown> => {
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
 * Runs a program on the runtime without a scheduler hop when it can: effect 4 starts a fiber synchronously, so a
 * program that waits for nothing (store-memory, a cached key set) has its exit at once; otherwise it is awaited.
 */
const runExit = <A>(
  runtime: AccordRuntime,
  program: Effect.Effect<A, never, AccordServices>
): Exit.Exit<A, unknown> | Promise<Exit.Exit<A, unknown>> => {
  const fiber = runtime.runFork(program)
  const exit = fiber.pollUnsafe()
  if (exit !== undefined) return exit
  return new Promise((resolve) => fiber.addObserver(resolve))
}

/**
 * The program's value, or the problem for its domain error. Anything else (a defect, or the runtime's own layer
 * failing to build) is thrown, and answered as a 500.
 */
const outcomeOf = <A>(exit: Exit.Exit<Result.Result<A, DomainError>, unknown>): Outcome<A> => {
  if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
  const result = exit.value
  return Result.isSuccess(result)
    ? { ok: true, value: result.success }
    : { ok: false, problem: problemOf(result.failure) }
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
      endpoints: new Map(
        api.operations.map((operation): [string, Endpoint] => [operation.method, { kind: "operation", operation }])
      )
    })),
    {
      path: "/openapi.json",
      exact: true,
      endpoints: staticEndpoint(() => ({ contentType: JSON_TYPE, body: openApi() }))
    },
    {
      path: "/docs",
      exact: true,
      endpoints: staticEndpoint(() => ({ contentType: "text/html; charset=utf-8", body: docsPage }))
    },
    {
      path: "/docs/{asset}",
      exact: true,
      endpoints: staticEndpoint(({ asset = "" }) =>
        asset === "init.js"
          ? { contentType: "text/javascript; charset=utf-8", body: DOCS_INIT_SCRIPT }
          : docs.get(asset)
      )
    }
  ])

  const respond = (
    requestId: string,
    status: number,
    contentType: string | undefined,
    body: string | Uint8Array | undefined,
    extra?: Readonly<Record<string, string>>
  ): HttpResponse => {
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
    const exit = runExit(runtime, Effect.result(program))
    return exit instanceof Promise ? exit.then(outcomeOf) : outcomeOf(exit)
  }

  /** After the authenticator: rate limit (429) and scope (403), then what the operation's program is started with. */
  const grant = (access: Exclude<Operation["access"], { kind: "none" }>, principal: Principal): Outcome<Start> => {
    const waitSeconds = rateLimit?.(principalKey(principal)) ?? 0
    if (waitSeconds > 0) return { ok: false, problem: problems.rateLimited(waitSeconds) }
    if (access.kind === "any") return { ok: true, value: (input) => access.run(principal, input) }
    if (principal._tag !== "User") return INSUFFICIENT_SCOPE_OUTCOME
    return { ok: true, value: (input) => access.run(principal.userId, input) }
  }

  /** With the body read (or refused): "required" (400), then the use case. */
  const useCase = (
    operation: Operation,
    start: Start,
    params: OperationRequest["params"],
    read: Outcome<unknown>
  ): Effect.Effect<Outcome<unknown>, DomainError, AccordServices> => {
    if (!read.ok) return Effect.succeed(read)
    if (read.value === undefined && operation.body?.required === true)
      return Effect.succeed(refuse(problems.bodyRequired()))
    return Effect.map(start({ params, body: read.value }), succeed)
  }

  /**
   * After the credentials: the body, then the use case, in the same program when the body needs no wait (decided by
   * the headers, or already arrived in full); otherwise the program ends awaiting it, since the read is the adapter's
   * I/O, not an Effect.
   */
  const afterCredentials = (
    operation: Operation,
    request: HttpRequest,
    params: OperationRequest["params"],
    start: Start
  ): Step => {
    if (operation.body === undefined) return useCase(operation, start, params, NO_BODY)
    const decided = bodyByHeaders(request, limit)
    if (decided !== undefined) return useCase(operation, start, params, decided)
    const arrived = request.readBodyNow?.(limit)
    if (arrived !== undefined) return useCase(operation, start, params, parseBody(arrived, limit))
    const read = request.readBody
    return read === undefined
      ? useCase(operation, start, params, NO_BODY)
      : Effect.succeed({ awaiting: { start, read } })
  }

  /**
   * The life of an API request after routing: credentials (401, 429, 403), then the body (415, 413, 400), then the
   * use case. Usually one fiber runs it all; a body still on its way is awaited, then a second fiber runs the use case.
   * A request without a usable credential is refused in plain code, with no fiber.
   */
  const runOperation = (
    operation: Operation,
    request: HttpRequest,
    params: OperationRequest["params"]
  ): Outcome<unknown> | Promise<Outcome<unknown>> => {
    const access = operation.access
    let program: Step
    if (access.kind === "none") program = Effect.suspend(() => afterCredentials(operation, request, params, access.run))
    else {
      const credential = readCredential(header(request, "authorization"))
      if (credential._tag === "Missing") return MISSING_CREDENTIAL_OUTCOME
      if (credential._tag === "Malformed") return INVALID_CREDENTIAL_OUTCOME
      program = Effect.flatMap(Authenticator, (authenticator) =>
        Effect.flatMap(authenticator.authenticate(credential.token), (principal) => {
          const granted = grant(access, principal)
          return granted.ok ? afterCredentials(operation, request, params, granted.value) : Effect.succeed(granted)
        })
      )
    }
    const continueWith = (first: Outcome<StepResult>): Outcome<unknown> | Promise<Outcome<unknown>> => {
      if (!first.ok) return first
      if (!isAwaiting(first.value)) return first.value
      const { start, read } = first.value.awaiting
      return read(limit).then((result) => {
        const outcome = run(useCase(operation, start, params, parseBody(result, limit)))
        return outcome instanceof Promise ? outcome.then(settle) : settle(outcome)
      })
    }
    const first = run(program)
    return first instanceof Promise ? first.then(continueWith) : continueWith(first)
  }

  interface Answer {
    readonly response: HttpResponse
    readonly template?: string
  }

  /** Routing (414, 404, OPTIONS, 405), static documents, and operations; a promise only when something waits. */
  const answer = (request: HttpRequest, requestId: string): Answer | Promise<Answer> => {
    const isHead = request.method === "HEAD"
    const path = request.path
    if (path.length > maxPathLength)
      return { response: problemResponse(requestId, problems.uriTooLong(maxPathLength), isHead) }
    const inPrefix =
      path.startsWith(prefix) && (path.length === prefix.length || path.charCodeAt(prefix.length) === 0x2f) /* / */
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
    const toAnswer = (result: Outcome<unknown>): Answer => {
      if (!result.ok) return { response: problemResponse(requestId, result.problem, isHead), template }
      const body = isHead ? undefined : JSON.stringify(result.value)
      return { response: respond(requestId, operation.successStatus, JSON_TYPE, body), template }
    }
    const result = runOperation(operation, request, match.params)
    return result instanceof Promise ? result.then(toAnswer) : toAnswer(result)
  }

  return (request) => {
    const started = performance.now()
    const requestId = pickRequestId(header(request, "x-request-id"))
    const internalError = (cause: unknown): Answer => {
      options.onInternalError?.(requestId, cause)
      return { response: problemResponse(requestId, problems.internal(), request.method === "HEAD") }
    }
    const finish = (outcome: Answer): HttpResponse => {
      options.onResponse?.({
        requestId,
        method: request.method,
        route: outcome.template,
        status: outcome.response.status,
        durationMs: performance.now() - started
      })
      return outcome.response
    }
    // No async function here: a request answered without waiting costs no extra promise turns. Only a host's own
    // callback (onResponse, onInternalError) throwing makes the promise reject, as it did from an async function.
    try {
      let pending: Answer | Promise<Answer>
      try {
        pending = answer(request, requestId)
      } catch (cause) {
        pending = internalError(cause)
      }
      if (pending instanceof Promise) return pending.then(finish, (cause: unknown) => finish(internalError(cause)))
      return Promise.resolve(finish(pending))
    } catch (error) {
      return Promise.reject(error instanceof Error ? error : new Error(String(error)))
    }
  }
}
