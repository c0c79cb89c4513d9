import { Cause, Data, Effect, Exit } from "effect"
import { Unauthenticated, InsufficientScope, type DomainError } from "../domain/errors.js"
import type { Principal } from "../domain/principal.js"
import { Authenticator } from "../ports/authenticator.js"
import { readCredential } from "./authorization.js"
import { docsPage, DOCS_INIT_SCRIPT } from "./docs-page.js"
import { isJsonObject, readJson } from "./json-body.js"
import { isJsonMediaType } from "./media-type.js"
import { makeOpenApiDocument } from "./openapi.js"
import { problemBody, problemOf, problems, type Problem } from "./problem.js"
import { makeRateLimiter } from "./rate-limit.js"
import { compileRouter } from "./router.js"
import { apiRoutes, type Operation, type OperationRequest } from "./routes.js"
import type { AccordServices, HttpHandler, HttpHandlerOptions, HttpRequest, HttpResponse } from "./types.js"

export const DEFAULT_PREFIX = "/api"
export const DEFAULT_BODY_LIMIT = 16_384
export const DEFAULT_MAX_PATH_LENGTH = 2048

const JSON_TYPE = "application/json; charset=utf-8"
const PROBLEM_TYPE = "application/problem+json; charset=utf-8"
const REQUEST_ID = /^[A-Za-z0-9._-]{1,128}$/

/** An HTTP-level refusal raised before the use case runs (media type, size, JSON syntax, body shape). */
class HttpProblem extends Data.TaggedError("HttpProblem")<{ readonly problem: Problem }> {}

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

const authenticate = (request: HttpRequest) => {
  const credential = readCredential(header(request, "authorization"))
  switch (credential._tag) {
    case "Missing":
      return Effect.fail(new Unauthenticated({ reason: "missing" }))
    case "Malformed":
      return Effect.fail(new Unauthenticated({ reason: "invalid_token" }))
    case "Token":
      return Effect.flatMap(Authenticator, (authenticator) => authenticator.authenticate(credential.token))
  }
}

/** Media type, then size, then JSON syntax, then "is an object": CONTRACT's order of checks for bodies. */
const readBody = (request: HttpRequest, limit: number): Effect.Effect<unknown, HttpProblem> => {
  if (!declaresBody(request) || request.readBody === undefined) return Effect.succeed(undefined)
  if (!isJsonMediaType(header(request, "content-type"))) {
    return Effect.fail(new HttpProblem({ problem: problems.unsupportedMediaType() }))
  }
  if (Number(header(request, "content-length") ?? 0) > limit) {
    return Effect.fail(new HttpProblem({ problem: problems.payloadTooLarge(limit) }))
  }
  const reader = request.readBody
  return Effect.flatMap(
    Effect.promise(() => reader(limit)),
    (result): Effect.Effect<unknown, HttpProblem> => {
      if (result._tag === "TooLarge") return Effect.fail(new HttpProblem({ problem: problems.payloadTooLarge(limit) }))
      if (result._tag === "Aborted") return Effect.fail(new HttpProblem({ problem: problems.invalidJson("The body could not be read.") }))
      if (result.bytes.length === 0) return Effect.succeed(undefined)
      const parsed = readJson(result.bytes)
      if (!parsed.ok) return Effect.fail(new HttpProblem({ problem: problems.invalidJson(parsed.detail) }))
      if (!isJsonObject(parsed.value)) return Effect.fail(new HttpProblem({ problem: problems.invalidBody() }))
      return Effect.succeed(parsed.value)
    }
  )
}

/** The whole life of an API request after routing: credentials, body, use case; every failure a problem. */
const principalKey = (principal: Principal): string =>
  principal._tag === "User" ? `user:${principal.userId}` : `client:${principal.clientId}`

const runOperation = (
  operation: Operation,
  request: HttpRequest,
  params: OperationRequest["params"],
  limit: number,
  rateLimit: ((key: string) => number) | undefined
): Effect.Effect<{ readonly status: number; readonly body: unknown }, HttpProblem, AccordServices> => {
  type Program = Effect.Effect<unknown, DomainError | HttpProblem, AccordServices>
  const withBody = (run: (input: OperationRequest) => Program): Program =>
    operation.body === undefined
      ? run({ params, body: undefined })
      : Effect.flatMap(readBody(request, limit), (body): Program =>
          body === undefined && operation.body?.required === true
            ? Effect.fail(new HttpProblem({ problem: problems.bodyRequired() }))
            : run({ params, body })
        )
  const access = operation.access
  const program: Program =
    access.kind === "none"
      ? withBody(access.run)
      : Effect.flatMap(authenticate(request), (principal): Program => {
          const waitSeconds = rateLimit?.(principalKey(principal)) ?? 0
          if (waitSeconds > 0) return Effect.fail(new HttpProblem({ problem: problems.rateLimited(waitSeconds) }))
          if (access.kind === "any") return withBody((input) => access.run(principal, input))
          if (principal._tag !== "User") return Effect.fail(new InsufficientScope())
          return withBody((input) => access.run(principal.userId, input))
        })
  return program.pipe(
    Effect.map((body) => ({ status: operation.successStatus, body })),
    Effect.mapError((error) => (error._tag === "HttpProblem" ? error : new HttpProblem({ problem: problemOf(error) })))
  )
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

  const respond = (requestId: string, status: number, contentType: string | undefined, body: string | Uint8Array | undefined, extra?: Readonly<Record<string, string>>): HttpResponse => ({
    status,
    headers: {
      ...(contentType !== undefined && { "content-type": contentType }),
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "x-request-id": requestId,
      ...extra
    },
    body
  })
  const problemResponse = (requestId: string, problem: Problem, isHead: boolean): HttpResponse =>
    respond(requestId, problem.status, PROBLEM_TYPE, isHead ? undefined : problemBody(problem), problem.headers)

  const answer = async (request: HttpRequest, requestId: string): Promise<{ response: HttpResponse; template?: string }> => {
    const isHead = request.method === "HEAD"
    const path = request.path
    if (path.length > maxPathLength) return { response: problemResponse(requestId, problems.uriTooLong(maxPathLength), isHead) }
    const inPrefix = path === prefix || path.startsWith(prefix + "/")
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
    const exit = await runtime.runPromiseExit(runOperation(endpoint.operation, request, match.params, limit, rateLimit))
    if (Exit.isSuccess(exit)) {
      const { status, body } = exit.value
      return { response: respond(requestId, status, JSON_TYPE, isHead ? undefined : JSON.stringify(body)), template }
    }
    // A failure that is not a Problem can only come from the runtime's own layer failing to build: a defect here.
    const failure = Cause.failureOption(exit.cause)
    if (failure._tag === "Some" && failure.value instanceof HttpProblem) {
      return { response: problemResponse(requestId, failure.value.problem, isHead), template }
    }
    throw Cause.squash(exit.cause)
  }

  return async (request) => {
    const started = performance.now()
    const requestId = pickRequestId(header(request, "x-request-id"))
    let outcome: { response: HttpResponse; template?: string }
    try {
      outcome = await answer(request, requestId)
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
