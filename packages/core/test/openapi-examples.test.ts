import { NotFound, PreconditionFailed, Unavailable, UnknownCursor } from "@accord/domain"
import {
  makeOpenApiDocument,
  OPERATION_DOCS,
  operations,
  PROBLEM_EXAMPLES,
  validationProblemExample,
  type ErasedOperationDocs,
  type ProblemCode
} from "@accord/contract"
import { makeHttpHandler, problem, problemBody, type HttpRequest } from "@accord/core"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { runtimeWithPorts, tokenTableAuthenticator } from "@accord/test-support"

// The OpenAPI document's response examples (contract/src/examples.ts) are what the server answers: each problem
// example is compared, byte for byte, with the body the handler sends for a request that gets that code.

// The payment method id decides what the store answers: the use case's declared errors, and a defect (500).
const runtime = runtimeWithPorts({
  authenticator: tokenTableAuthenticator(),
  paymentMethods: {
    listByUser: () => Effect.fail(new Unavailable({ reason: "store_unreachable", retryAfterSeconds: 1 })),
    setDefault: (_userId, id) =>
      id === "pm_gone"
        ? Effect.fail(new NotFound({ resource: "payment_method" }))
        : id === "pm_stale"
          ? Effect.fail(new PreconditionFailed())
          : Effect.die(new Error("a defect"))
  },
  events: { listByOwner: () => Effect.fail(new UnknownCursor()) },
  storeAdmin: { ping: Effect.void }
})
afterAll(() => runtime.dispose())

const handler = makeHttpHandler({
  runtime,
  rateLimit: { consume: (key) => Promise.resolve(key === "client:web" ? 0 : 0) },
  onInternalError: () => undefined
})
const limited = makeHttpHandler({ runtime, rateLimit: { consume: () => Promise.resolve(3) } })
const requiring = makeHttpHandler({ runtime, requireIfMatch: true })
// A stream past the credential's bound: none allowed, its first page empty.
const streamsFull = makeHttpHandler({
  runtime,
  eventStreams: { perCredential: 0 },
  streamImplementations: {
    listEvents: { page: () => Effect.succeed([]), subscribe: () => Effect.succeed(() => undefined) }
  }
})
// Past the alias's sunset (docs/api.md, "Versioning"): dates given at start, in the past.
const retired = makeHttpHandler({ runtime, aliasDates: { deprecatedAt: new Date(0), sunsetAt: new Date(0) } })

const USER = { authorization: "Bearer user-token" }
const JSON_USER = { ...USER, "content-type": "application/json" }
const utf8 = new TextEncoder()
/** The headers with the body's Content-Length, and the body. */
const withBody = (
  headers: Readonly<Record<string, string>>,
  body: string
): Pick<HttpRequest, "headers" | "readBody"> => {
  const bytes = utf8.encode(body)
  return {
    headers: { ...headers, "content-length": String(bytes.byteLength) },
    readBody: () => Promise.resolve({ _tag: "Read", bytes })
  }
}
const PREFERENCES = "/api/users/v1/preferences/language/"
const EVENTS = "/api/users/v1/events/"
const METHOD = (id: string) => `/api/payments/v1/payment-methods/${id}/`

/** A request the handler answers with each code's problem example (docs/api.md, "Errors"). */
const REQUESTS: { readonly [C in keyof typeof PROBLEM_EXAMPLES]?: readonly [HttpRequest, typeof handler?] } = {
  invalid_json: [{ method: "PUT", path: PREFERENCES, ...withBody(JSON_USER, "") }],
  invalid_body: [{ method: "PUT", path: PREFERENCES, ...withBody(JSON_USER, "[]") }],
  invalid_query: [{ method: "GET", path: EVENTS, query: "limit=0", headers: USER }],
  invalid_cursor: [{ method: "GET", path: EVENTS, query: "after=019a4f6e-3c2b-7d40-9a1e-5f6b7c8d9e0f", headers: USER }],
  unauthenticated: [{ method: "GET", path: PREFERENCES, headers: {} }],
  invalid_token: [{ method: "GET", path: PREFERENCES, headers: { authorization: "Bearer unknown-token" } }],
  insufficient_scope: [{ method: "GET", path: PREFERENCES, headers: { authorization: "Bearer client-token" } }],
  not_found: [{ method: "PUT", path: METHOD("pm_gone"), headers: USER }],
  method_not_allowed: [{ method: "DELETE", path: PREFERENCES, headers: USER }],
  not_acceptable: [{ method: "GET", path: EVENTS, headers: { ...USER, accept: "text/html" } }],
  too_many_streams: [{ method: "GET", path: EVENTS, headers: { ...USER, accept: "text/event-stream" } }, streamsFull],
  gone: [{ method: "PUT", path: "/api/v1/payment-methods/pm_2/", headers: USER }, retired],
  payload_too_large: [{ method: "PUT", path: PREFERENCES, ...withBody(JSON_USER, " ".repeat(16385)) }],
  unsupported_media_type: [
    { method: "PUT", path: PREFERENCES, ...withBody({ ...USER, "content-type": "text/plain" }, "{}") }
  ],
  not_implemented: [
    {
      method: "PUT",
      path: PREFERENCES,
      ...withBody({ ...JSON_USER, "transfer-encoding": "gzip, chunked" }, "{}")
    }
  ],
  rate_limited: [{ method: "GET", path: PREFERENCES, headers: USER }, limited],
  precondition_failed: [{ method: "PUT", path: METHOD("pm_stale"), headers: { ...USER, "if-match": '"x"' } }],
  precondition_required: [{ method: "PUT", path: PREFERENCES, ...withBody(JSON_USER, "{}") }, requiring],
  uri_too_long: [{ method: "GET", path: `/api/${"a".repeat(2050)}`, headers: {} }],
  unavailable: [{ method: "GET", path: "/api/payments/v1/payment-methods/", headers: USER }],
  internal: [{ method: "PUT", path: METHOD("pm_boom"), headers: USER }]
}

/** Refusals Node makes before a request exists (@accord/node): the core's own problem values. */
const NODE_PROBLEMS = {
  bad_request: problem("bad_request"),
  request_timeout: problem("request_timeout"),
  headers_too_large: problem("headers_too_large"),
  expectation_failed: problem("expectation_failed")
} as const

/** Every operation's docs and examples, their static types erased (the areas' `docs`). */
const DOCS = OPERATION_DOCS as Readonly<Record<string, ErasedOperationDocs>>

const bodyText = (body: string | Uint8Array | undefined): string =>
  typeof body === "string" ? body : new TextDecoder().decode(body)

describe("the OpenAPI document's response examples are the server's answers", () => {
  it.each(Object.entries(REQUESTS))("%s: the handler sends the example's exact body", async (code, entry) => {
    const [request, answering = handler] = entry ?? []
    if (request === undefined) throw new Error(`no request for ${code}`)
    const response = await answering(request)
    const example = PROBLEM_EXAMPLES[code as keyof typeof PROBLEM_EXAMPLES]
    expect(response.status).toBe(example.status)
    expect(bodyText(response.body)).toBe(JSON.stringify(example))
  })

  it.each(Object.entries(NODE_PROBLEMS))("%s: the example is the problem @accord/node answers", (code, problem) => {
    expect(problemBody(problem)).toBe(JSON.stringify(PROBLEM_EXAMPLES[code as keyof typeof NODE_PROBLEMS]))
  })

  it("every problem code but validation_failed has its request or its Node refusal above", () => {
    expect(Object.keys({ ...REQUESTS, ...NODE_PROBLEMS }).sort()).toEqual(Object.keys(PROBLEM_EXAMPLES).sort())
  })

  it.each(Object.entries(operations).filter(([, operation]) => operation.body !== undefined))(
    "%s: the validation_failed example is the answer to its request",
    async (operationId, operation) => {
      const docs = DOCS[operationId]
      const example = docs?.validationExample
      if (example === undefined) throw new Error(`${operationId} reads a body and has no validation example`)
      // Each path parameter at its docs' example.
      const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => docs?.params?.[name]?.example ?? name)
      const response = await handler({
        method: operation.method,
        path: `/api${path}`,
        ...withBody(JSON_USER, JSON.stringify(example.request))
      })
      expect(response.status).toBe(400)
      expect(bodyText(response.body)).toBe(JSON.stringify(validationProblemExample(example)))
    }
  )

  it.each(Object.entries(operations))("%s: the success example decodes with its Schema", (operationId, operation) => {
    const example = DOCS[operationId]?.successExample
    const { schema } = operation.success
    // A 204 has no body, and so no example.
    if (schema === undefined) return expect(example).toBeUndefined()
    const decoded = Schema.decodeUnknownExit(schema)(example)
    expect(decoded._tag, JSON.stringify(example)).toBe("Success")
  })

  // What swagger-ui showed before: an example made up from the schema, with "string", 0 and an `errors` array on a
  // 401. Every response now names its own.
  it("every response of the document has an example; no problem example but validation_failed lists errors", () => {
    const document = makeOpenApiDocument({ serverUrl: "/api" }) as {
      readonly paths: Record<string, Record<string, { readonly responses: Record<string, Record<string, unknown>> }>>
      readonly components: { readonly examples: Record<string, { readonly value: unknown }> }
    }
    const named = (ref: string): unknown =>
      document.components.examples[ref.replace("#/components/examples/", "")]?.value
    for (const [path, methods] of Object.entries(document.paths))
      for (const [method, operation] of Object.entries(methods))
        for (const [status, response] of Object.entries(operation.responses)) {
          if (status === "304") continue
          const content = response["content"] as
            | Record<
                string,
                { readonly example?: unknown; readonly examples?: Record<string, { readonly $ref: string }> }
              >
            | undefined
          const label = `${method} ${path} ${status}`
          // No Content: nothing to show.
          if (status === "204") {
            expect(content, label).toBeUndefined()
            continue
          }
          const media = Object.values(content ?? {})[0]
          if (Number(status) < 400) {
            expect(media?.example, label).toBeDefined()
            continue
          }
          const examples = Object.entries(media?.examples ?? {})
          expect(examples.length, label).toBeGreaterThan(0)
          for (const [code, { $ref }] of examples) {
            const value = named($ref)
            expect(value, `${label} ${code}: ${$ref}`).toBeDefined()
            expect((value as { status: number }).status, `${label} ${code}`).toBe(Number(status))
            expect("errors" in (value as object), `${label} ${code}`).toBe(
              (code as ProblemCode) === "validation_failed"
            )
          }
        }
  })
})
