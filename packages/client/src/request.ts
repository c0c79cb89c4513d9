import type { OperationId, ProblemCode } from "@accord/contract"
import {
  OPERATION_ROUTES,
  readDeprecation,
  type ErasedOperationRoute,
  type ProblemWithCode
} from "@accord/contract/routes"
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
  readonly query?: Readonly<Record<string, unknown>>
  readonly body?: unknown
  readonly ifMatch?: string
  readonly ifNoneMatch?: string
  readonly signal?: AbortSignal
}

export type AnyResult = AccordSuccess<number, unknown> | AccordFailure<ProblemCode> | AccordNotModified

/** A method of the client at run time, whatever the operation (its static type is `ClientMethod<O>`). */
export type AnyMethod = (request?: AnyRequest) => Promise<AnyResult>

/** A body judged: the value it stands for, or why it is not one. */
export type Judged<A> =
  { readonly ok: true; readonly value: A } | { readonly ok: false; readonly why: string; readonly cause?: unknown }

/**
 * How the JSON body of an answer is judged once its status and media type are the operation's: the light check
 * (client.ts) or a decode with the contract's Schemas (validated.ts).
 */
export interface AnswerCheck {
  /** The body of the operation's success status, as the success value. */
  readonly success: (id: OperationId, body: unknown) => Judged<unknown>
  /** A problem+json body, as a problem whose code is one of `codes` (the operation's); its status is checked after. */
  readonly problem: (
    id: OperationId,
    body: unknown,
    codes: ReadonlyArray<ProblemCode>
  ) => Judged<ProblemWithCode<ProblemCode>>
}

/** The options with their defaults filled in. */
interface Settings {
  readonly baseUrl: string
  readonly token: TokenSource | undefined
  readonly fetch: FetchLike
  readonly onDeprecation: AccordClientOptions["onDeprecation"]
}

const settingsOf = (options: AccordClientOptions): Settings => ({
  baseUrl: options.baseUrl.replace(/\/+$/, ""),
  token: options.token,
  onDeprecation: options.onDeprecation,
  // Looked up at each call, so a fetch replaced after the client was made (a test's stub) is the one used.
  fetch: options.fetch ?? ((request) => globalThis.fetch(request))
})

/** An operation as a method reads it: its plain route (the contract's, generated) and its problem codes. */
interface BoundOperation {
  readonly id: OperationId
  readonly route: ErasedOperationRoute
  readonly codes: ReadonlyArray<ProblemCode>
  readonly check: AnswerCheck
}

const encoder = new TextEncoder()

const urlOf = ({ id, route }: BoundOperation, settings: Settings, request: AnyRequest | undefined): string => {
  let path: string = route.path
  for (const name of route.params) {
    const value = request?.params?.[name]
    if (typeof value !== "string") throw new TypeError(`${id}: params.${name} must be a string`)
    path = path.replace(`{${name}}`, () => encodeURIComponent(value))
  }
  // Only the parameters the operation lists, in its order; one left out is not sent (docs/api.md, "Events").
  const query: Array<string> = []
  for (const name of route.query) {
    const value = request?.query?.[name]
    if (value === undefined) continue
    if (typeof value !== "string") throw new TypeError(`${id}: query.${name} must be a string`)
    query.push(`${name}=${encodeURIComponent(value)}`)
  }
  return settings.baseUrl + path + (query.length === 0 ? "" : `?${query.join("&")}`)
}

const resolveToken = async (token: TokenSource | undefined): Promise<string | undefined> => {
  if (typeof token !== "function") return token
  try {
    return await token()
  } catch (cause) {
    throw new AccordTransportError({ reason: "token", message: "The token function failed.", cause })
  }
}

const mediaTypeOf = (contentType: string | null): string | undefined => contentType?.split(";")[0]?.trim().toLowerCase()

const undecodable = (id: OperationId, status: number, why: string, cause?: unknown) =>
  new AccordTransportError({
    reason: "undecodable",
    message: `${id}: the ${status} answer is not one this operation gives (${why}).`,
    status,
    ...(cause !== undefined && { cause })
  })

/** The JSON body of an answer with the media type `expected`, judged by `judge`; anything else is undecodable. */
const judgedBody = <A>(
  id: OperationId,
  response: Response,
  text: string,
  expected: string,
  judge: (body: unknown) => Judged<A>
): A => {
  const { status } = response
  const contentType = response.headers.get("content-type")
  if (mediaTypeOf(contentType) !== expected) throw undecodable(id, status, `Content-Type ${contentType}`)
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch (cause) {
    throw undecodable(id, status, "the body is not JSON", cause)
  }
  const judged = judge(body)
  if (!judged.ok) throw undecodable(id, status, judged.why, judged.cause)
  return judged.value
}

/**
 * The answer read as the operation's success (its status, `application/json`, a JSON body the check accepts) or as
 * one of its problems (`application/problem+json`, the problem shape with one of its codes, its status the HTTP
 * status and its code's); anything else is undecodable (docs/api.md, "Errors" and "Headers on every response").
 */
const readAnswer = (operation: BoundOperation, response: Response, text: string): AnyResult => {
  const { id, route, codes, check } = operation
  const { status } = response
  const etag = response.headers.get("etag") ?? undefined
  if (status === 304 && route.conditional === "ifNoneMatch") return { ok: true, status, notModified: true, etag }
  // A 204 has no body to judge (docs/api.md, "Precise rules").
  if (status === 204 && route.success === 204) return { ok: true, status, value: undefined, etag }
  if (status === route.success) {
    const value = judgedBody(id, response, text, "application/json", (body) => check.success(id, body))
    return { ok: true, status, value, etag }
  }
  const problem = judgedBody(id, response, text, "application/problem+json", (body) => check.problem(id, body, codes))
  if (problem.status !== status || route.problems[problem.code] !== status)
    throw undecodable(id, status, `a ${problem.code} problem with status ${problem.status}`)
  // Its status is its code's, checked above: what ProblemBody states.
  const checked = problem as ProblemBody
  return { ok: false, status: checked.status, problem: checked }
}

/**
 * Sends one request for an operation and reads its answer. Rejects with AccordTransportError when no answer of the
 * API's could be had, and with a TypeError for a request its static type would have refused (a missing path
 * parameter from untyped code).
 */
const send = async (
  operation: BoundOperation,
  settings: Settings,
  request: AnyRequest | undefined
): Promise<AnyResult> => {
  const { id, route } = operation
  const url = urlOf(operation, settings, request)
  const headers = new Headers({ accept: "application/json, application/problem+json" })
  if (route.access !== "public") {
    const token = await resolveToken(settings.token)
    if (token !== undefined) headers.set("authorization", `Bearer ${token}`)
  }
  if (request?.ifMatch !== undefined && route.conditional !== undefined && route.conditional !== "ifNoneMatch")
    headers.set("if-match", request.ifMatch)
  if (request?.ifNoneMatch !== undefined && route.conditional === "ifNoneMatch")
    headers.set("if-none-match", request.ifNoneMatch)
  // Only an operation that reads a body sends one; without it, an optional body is simply absent.
  const body = !route.body || request?.body === undefined ? undefined : encoder.encode(JSON.stringify(request.body))
  if (body !== undefined) {
    headers.set("content-type", "application/json")
    // What fetch puts on the wire anyway, stated on the Request itself so that a fetch handler called in process sees
    // the body a server would (docs/api.md, "Precise rules": a positive Content-Length declares a body). Browsers
    // drop it from a Request (a forbidden header name) and send their own: the same value.
    headers.set("content-length", String(body.byteLength))
  }
  const outgoing = new Request(url, {
    method: route.method,
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
      message: `${id}: ${route.method} ${url} got no answer.`,
      cause
    })
  }
  if (settings.onDeprecation !== undefined) {
    const notice = readDeprecation((name) => response.headers.get(name))
    if (notice !== undefined) settings.onDeprecation({ ...notice, operationId: id })
  }
  return readAnswer(operation, response, text)
}

/** Every operation of the contract as plain data, by operationId, read through the erased view. */
const ROUTES: Readonly<Record<OperationId, ErasedOperationRoute>> = OPERATION_ROUTES

/** One method per operation of the contract, named by its operationId, its answers judged by `check`. */
export const methodsOf = (
  options: AccordClientOptions,
  check: AnswerCheck
): Readonly<Record<OperationId, AnyMethod>> => {
  const settings = settingsOf(options)
  const methods: Partial<Record<OperationId, AnyMethod>> = {}
  for (const id of Object.keys(ROUTES) as ReadonlyArray<OperationId>) {
    const route = ROUTES[id]
    const operation: BoundOperation = {
      id,
      route,
      codes: Object.keys(route.problems) as ReadonlyArray<ProblemCode>,
      check
    }
    methods[id] = (request) => send(operation, settings, request)
  }
  // Filled above for every key of ROUTES, which is every OperationId (OperationRoutes is a mapped type over them).
  return methods as Readonly<Record<OperationId, AnyMethod>>
}
