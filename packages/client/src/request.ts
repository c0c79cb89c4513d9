import {
  type OperationId,
  operations,
  PROBLEM_CODE_STATUS,
  type ProblemCode,
  problemCodesOf,
  ProblemSchema,
  type TypedOperation
} from "@accord/contract"
import { Result, Schema } from "effect"
import { AccordTransportError } from "./errors.js"
import type {
  AccordClientOptions,
  AccordFailure,
  AccordNotModified,
  AccordSuccess,
  FetchLike,
  ProblemBody,
  TokenSource
} from "./types.js"

/** What a request carries at run time, whatever the operation (its static type is `RequestOf<O>`). */
export interface AnyRequest {
  readonly params?: Readonly<Record<string, unknown>>
  readonly body?: unknown
  readonly ifMatch?: string
  readonly ifNoneMatch?: string
  readonly signal?: AbortSignal
}

export type AnyResult = AccordSuccess<number, unknown> | AccordFailure<ProblemCode> | AccordNotModified

/** An operation with its decoders, built once when this module loads. */
interface Compiled {
  readonly operation: TypedOperation
  readonly decodeSuccess: (input: unknown) => Result.Result<unknown, Schema.SchemaError>
  readonly decodeProblem: (input: unknown) => Result.Result<ProblemBody, Schema.SchemaError>
}

const compile = (operation: TypedOperation): Compiled => ({
  operation,
  decodeSuccess: Schema.decodeUnknownResult(operation.success.schema),
  // The contract's ProblemSchema with `code` narrowed to the codes this operation can be answered with (problemCodesOf).
  decodeProblem: Schema.decodeUnknownResult(
    ProblemSchema.mapFields((fields) => ({ ...fields, code: Schema.Literals(problemCodesOf(operation)) }))
  ) as Compiled["decodeProblem"]
})

/** Every operation of the contract's table, compiled: the client's methods, by operationId. */
export const compiledOperations = Object.fromEntries(
  Object.entries(operations).map(([id, operation]) => [id, compile(operation)])
) as Readonly<Record<OperationId, Compiled>>

/** The options with their defaults filled in. */
export interface Settings {
  readonly baseUrl: string
  readonly token: TokenSource | undefined
  readonly fetch: FetchLike
}

export const settingsOf = (options: AccordClientOptions): Settings => ({
  baseUrl: options.baseUrl.replace(/\/+$/, ""),
  token: options.token,
  // Looked up at each call, so a fetch replaced after the client was made (a test's stub) is the one used.
  fetch: options.fetch ?? ((request) => globalThis.fetch(request))
})

const encoder = new TextEncoder()

const PATH_PARAMETER = /\{([^}]+)\}/g

const urlOf = (settings: Settings, operation: TypedOperation, params: AnyRequest["params"]): string =>
  settings.baseUrl +
  operation.path.replace(PATH_PARAMETER, (_, name: string) => {
    const value = params?.[name]
    if (typeof value !== "string") throw new TypeError(`${operation.operationId}: params.${name} must be a string`)
    return encodeURIComponent(value)
  })

const resolveToken = async (token: TokenSource | undefined): Promise<string | undefined> => {
  if (typeof token !== "function") return token
  try {
    return await token()
  } catch (cause) {
    throw new AccordTransportError({ reason: "token", message: "The token function failed.", cause })
  }
}

const mediaTypeOf = (contentType: string | null): string | undefined => contentType?.split(";")[0]?.trim().toLowerCase()

const undecodable = (operation: TypedOperation, status: number, why: string, cause?: unknown) =>
  new AccordTransportError({
    reason: "undecodable",
    message: `${operation.operationId}: the ${status} answer is not one this operation gives (${why}).`,
    status,
    ...(cause !== undefined && { cause })
  })

const parseJson = (operation: TypedOperation, status: number, text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch (cause) {
    throw undecodable(operation, status, "the body is not JSON", cause)
  }
}

/**
 * The answer read as the operation's success (its status, `application/json`, a body its success Schema decodes) or
 * as one of its problems (`application/problem+json`, decoded with the narrowed ProblemSchema, its status the one of
 * its code); anything else is undecodable (docs/api.md, "Errors" and "Headers on every response").
 */
const readAnswer = (compiled: Compiled, response: Response, text: string): AnyResult => {
  const { status } = response
  const contentType = response.headers.get("content-type")
  if (status === 304 && compiled.operation.conditional === "ifNoneMatch")
    return { ok: true, status, notModified: true, etag: response.headers.get("etag") ?? undefined }
  const { operation } = compiled
  const mediaType = mediaTypeOf(contentType)
  if (status === operation.success.status) {
    if (mediaType !== "application/json") throw undecodable(operation, status, `Content-Type ${contentType}`)
    const value = compiled.decodeSuccess(parseJson(operation, status, text))
    if (Result.isFailure(value)) throw undecodable(operation, status, value.failure.message, value.failure)
    return { ok: true, status, value: value.success, etag: response.headers.get("etag") ?? undefined }
  }
  if (mediaType !== "application/problem+json") throw undecodable(operation, status, `Content-Type ${contentType}`)
  const problem = compiled.decodeProblem(parseJson(operation, status, text))
  if (Result.isFailure(problem)) throw undecodable(operation, status, problem.failure.message, problem.failure)
  const { code } = problem.success
  if (problem.success.status !== status || PROBLEM_CODE_STATUS[code] !== status) {
    throw undecodable(operation, status, `a ${code} problem with status ${problem.success.status}`)
  }
  return { ok: false, status: PROBLEM_CODE_STATUS[code], problem: problem.success }
}

/**
 * Sends one request for an operation and reads its answer. Rejects with AccordTransportError when no answer of the
 * API's could be had, and with a TypeError for a request its static type would have refused (a missing path
 * parameter from untyped code).
 */
export const send = async (
  settings: Settings,
  compiled: Compiled,
  request: AnyRequest | undefined
): Promise<AnyResult> => {
  const { operation } = compiled
  const url = urlOf(settings, operation, request?.params)
  const headers = new Headers({ accept: "application/json, application/problem+json" })
  if (operation.access !== "public") {
    const token = await resolveToken(settings.token)
    if (token !== undefined) headers.set("authorization", `Bearer ${token}`)
  }
  if (request?.ifMatch !== undefined && operation.conditional !== undefined && operation.conditional !== "ifNoneMatch")
    headers.set("if-match", request.ifMatch)
  if (request?.ifNoneMatch !== undefined && operation.conditional === "ifNoneMatch")
    headers.set("if-none-match", request.ifNoneMatch)
  // Only an operation that reads a body sends one; without it, an optional body is simply absent.
  const body =
    operation.body === undefined || request?.body === undefined
      ? undefined
      : encoder.encode(JSON.stringify(request.body))
  if (body !== undefined) {
    headers.set("content-type", "application/json")
    // What fetch puts on the wire anyway, stated on the Request itself so that a fetch handler called in process sees
    // the body a server would (docs/api.md, "Precise rules": a positive Content-Length declares a body). Browsers
    // drop it from a Request (a forbidden header name) and send their own: the same value.
    headers.set("content-length", String(body.byteLength))
  }
  const outgoing = new Request(url, {
    method: operation.method,
    headers,
    ...(body !== undefined && { body }),
    ...(request?.signal !== undefined && { signal: request.signal })
  })
  let response: Response
  let text: string
  try {
    response = await settings.fetch(outgoing)
    text = await response.text()
  } catch (cause) {
    throw new AccordTransportError({
      reason: "network",
      message: `${operation.operationId}: ${operation.method} ${url} got no answer.`,
      cause
    })
  }
  return readAnswer(compiled, response, text)
}
