import { JsonSchema, type Schema, SchemaRepresentation } from "effect"
import { errorStatusesOf, problemCodesOf } from "./errors.js"
import { PROBLEM_EXAMPLES, SUCCESS_EXAMPLES, VALIDATION_EXAMPLES, type BodyOperationId } from "./examples.js"
import type { BodySpec, Operation } from "./operation.js"
import { OPERATION_DOCS, type OperationDocs, type OperationTag } from "./operation-docs.js"
import type { Operations } from "./operations.js"
import { PROBLEM_CODE_STATUS, ProblemSchema, REASON_PHRASES, type ProblemCode } from "./problem.js"
import { apiRoutes } from "./routes.js"

type JsonObject = Record<string, unknown>

/** The document's tags, in the order the API reference page shows them; every operation has one (operation-docs.ts). */
const TAGS: Readonly<Record<OperationTag, string>> = {
  plans: "Public subscription plan entries: a sign-up with an email and a password, which is never returned.",
  users: "The signed-in user's preferences: language, timezone and multi-factor authentication.",
  payments: "The signed-in user's payment methods, and which one is the default.",
  service:
    "The service itself: health, liveness and readiness probes for load balancers and orchestrators. No credential needed."
}

/** `X-Request-Id` is on every response, success or error (docs/api.md, "Headers on every response"). */
const REQUEST_ID_HEADER = "X-Request-Id"
const requestIdRef = { $ref: `#/components/headers/${REQUEST_ID_HEADER}` }

const RATE_LIMIT_HEADERS = {
  RateLimit: { $ref: "#/components/headers/RateLimit" },
  "RateLimit-Policy": { $ref: "#/components/headers/RateLimit-Policy" }
}
const ETAG_HEADER = "ETag"
const etagRef = { $ref: `#/components/headers/${ETAG_HEADER}` }

/** The request headers of a conditional operation (docs/api.md, "Conditional requests"). */
const conditionalParameters = (operation: Operation): ReadonlyArray<JsonObject> => {
  if (operation.conditional === undefined) return []
  if (operation.conditional === "ifNoneMatch")
    return [
      {
        name: "If-None-Match",
        in: "header",
        required: false,
        description:
          "Entity tags of representations the client has (weak comparison), or *: when one matches, 304 with the ETag and no body.",
        schema: { type: "string" }
      }
    ]
  return [
    {
      name: "If-Match",
      in: "header",
      required: false,
      description:
        operation.conditional === "ifMatchRequirable"
          ? "Entity tags (strong comparison), or *: the write happens only if the current representation has one of them, else 412 precondition_failed and nothing changes. A server started with --require-if-match answers a PUT without it 428 precondition_required."
          : "Entity tags (strong comparison), or *: the write happens only if the current representation has one of them, else 412 precondition_failed and nothing changes.",
      schema: { type: "string" }
    }
  ]
}

const ERROR_HEADERS: Readonly<Record<number, JsonObject>> = {
  401: { "WWW-Authenticate": { schema: { type: "string" }, description: "Bearer challenge" } },
  403: { "WWW-Authenticate": { schema: { type: "string" }, description: "Bearer challenge (insufficient_scope)" } },
  429: { "Retry-After": { schema: { type: "integer" }, description: "Seconds until the credential may send again" } },
  503: { "Retry-After": { schema: { type: "integer" }, description: "Seconds to wait before retrying" } }
}

/**
 * The request a person would send, per operation that reads a body, in wire form (the body Schema's Encoded side, so
 * a renamed field fails to compile; openapi.test.ts also runs each through its operation's decoder). Without it an API
 * reference page pre-fills a body from the schema alone: bounds as values (`"timezone": -720`) and the read-only
 * fields, which "Execute" would then send (docs/api.md, "OpenAPI document").
 */
const REQUEST_EXAMPLES: {
  readonly [K in BodyOperationId]: Operations[K]["body"] extends BodySpec<infer S> ? S["Encoded"] : never
} = {
  createPublicPlanEntry: { email: "ada@example.com", password: "correct horse battery staple" },
  updateLanguagePreferences: { language: "pt-BR", timezone: -180, mfa_enabled: true },
  setDefaultPaymentMethod: { is_default: true }
}

const exampleOf = (operation: Operation): unknown =>
  (REQUEST_EXAMPLES as Readonly<Record<string, unknown>>)[operation.operationId]

const successExampleOf = (operation: Operation): unknown =>
  (SUCCESS_EXAMPLES as Readonly<Record<string, unknown>>)[operation.operationId]

/** The name of a problem example in `components.examples`: the code, and the operation for `validation_failed`. */
const problemExampleName = (operation: Operation, code: ProblemCode): string =>
  code === "validation_failed" ? `${code}.${operation.operationId}` : code

/** The problem examples (examples.ts) some operation answers with, by `problemExampleName`: `components.examples`. */
const problemExampleComponents = (): Readonly<Record<string, JsonObject>> => {
  const components: Record<string, JsonObject> = {}
  for (const route of apiRoutes)
    for (const operation of route.operations)
      for (const code of problemCodesOf(operation)) {
        const value =
          code === "validation_failed"
            ? (VALIDATION_EXAMPLES as Readonly<Record<string, unknown>>)[operation.operationId]
            : PROBLEM_EXAMPLES[code]
        if (value !== undefined) components[problemExampleName(operation, code)] = { summary: code, value }
      }
  return Object.fromEntries(Object.entries(components).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/**
 * The problem bodies this operation answers with this status, one named example per code, each a reference to the
 * server's exact body in `components.examples`: an API reference page shows what a client gets instead of one it
 * makes up from the schema (`"detail": "string"`, an `errors` array on a 401).
 */
const problemExamples = (operation: Operation, status: number): Readonly<Record<string, JsonObject>> => {
  const examples: Record<string, JsonObject> = {}
  for (const code of problemCodesOf(operation))
    if (PROBLEM_CODE_STATUS[code] === status)
      examples[code] = { $ref: `#/components/examples/${problemExampleName(operation, code)}` }
  return examples
}

/** An operation's tag, summary and description; the table and OPERATION_DOCS have the same keys (both typed by OperationId). */
const docsOf = (operation: Operation): OperationDocs => {
  const docs = (OPERATION_DOCS as Readonly<Record<string, OperationDocs>>)[operation.operationId]
  if (docs === undefined) throw new Error(`${operation.operationId} has no entry in OPERATION_DOCS`)
  return docs
}

/** "Reason Phrase: problem code `a` or `b`": the problem codes (problemCodesOf) this operation answers with this status. */
const errorDescription = (operation: Operation, status: number): string => {
  const codes = problemCodesOf(operation)
    .filter((code) => PROBLEM_CODE_STATUS[code] === status)
    .map((code) => `\`${code}\``)
  const phrase = REASON_PHRASES[status] ?? "Error"
  if (codes.length === 0) return phrase
  const last = codes.pop()
  return `${phrase}: problem code ${codes.length === 0 ? last : `${codes.join(", ")} or ${last}`}`
}

/**
 * The OpenAPI 3.1 document, generated from the route table and the same Schemas the handler decodes with, so
 * field bounds in the document are the bounds that are enforced.
 */
export const makeOpenApiDocument = (options: { readonly serverUrl: string }): JsonObject => {
  // Every schema the document names, compiled together so that they share one set of definitions. From the Schemas'
  // own ASTs: they describe JSON already, and a derived JSON codec would also admit "NaN" for a number.
  const named: Array<Schema.Top> = [ProblemSchema]
  for (const route of apiRoutes) {
    for (const operation of route.operations) {
      named.push(operation.success.schema)
      if (operation.body !== undefined) named.push(operation.body.schema)
    }
  }
  const compiled = JsonSchema.toMultiDocumentOpenApi3_1(
    SchemaRepresentation.toJsonSchemaMultiDocument(
      SchemaRepresentation.toRepresentations(named.map((schema) => schema.ast) as [never, ...Array<never>]),
      { onExcessProperty: "error" }
    )
  )
  const definitions = compiled.definitions
  const schemaOf = (schema: Schema.Top): JsonSchema.JsonSchema => compiled.schemas[named.indexOf(schema)] ?? {}
  const problemRef = schemaOf(ProblemSchema)

  const operationObject = (operation: Operation, pathParams: ReadonlyArray<string>): JsonObject => {
    const credentialed = operation.access !== "public"
    // A credentialed operation's answers carry the rate limit's headers when the host runs one (docs/api.md, "Rate limit").
    const limitHeaders = credentialed ? RATE_LIMIT_HEADERS : {}
    const successHeaders: JsonObject =
      operation.conditional === undefined
        ? { [REQUEST_ID_HEADER]: requestIdRef, ...limitHeaders }
        : { [REQUEST_ID_HEADER]: requestIdRef, [ETAG_HEADER]: etagRef, ...limitHeaders }
    const responses: JsonObject = {
      [operation.success.status]: {
        description: REASON_PHRASES[operation.success.status],
        headers: successHeaders,
        content: {
          "application/json": { schema: schemaOf(operation.success.schema), example: successExampleOf(operation) }
        }
      }
    }
    if (operation.conditional === "ifNoneMatch")
      responses[304] = { description: "Not Modified: If-None-Match matched; no body", headers: successHeaders }
    // 500 `internal` is on every operation: errorStatusesOf leaves it out as no operation's contract, but a caller
    // still meets it, as problem+json with the X-Request-Id the server logged it under (docs/api.md, "Errors").
    for (const status of [...errorStatusesOf(operation), 500].sort((a, b) => a - b)) {
      responses[status] = {
        description: errorDescription(operation, status),
        headers: {
          [REQUEST_ID_HEADER]: requestIdRef,
          ...ERROR_HEADERS[status],
          ...(credentialed && status !== 401 && limitHeaders)
        },
        content: {
          "application/problem+json": { schema: problemRef, examples: problemExamples(operation, status) }
        }
      }
    }
    const example = exampleOf(operation)
    const docs = docsOf(operation)
    return {
      operationId: operation.operationId,
      tags: [docs.tag],
      summary: docs.summary,
      description: docs.description,
      ...(credentialed ? { security: [{ bearerAuth: [] }] } : { security: [] }),
      ...((pathParams.length > 0 || operation.conditional !== undefined) && {
        parameters: [
          // The table's one path parameter is the payment method's id (operations.ts), as the pattern says too.
          ...pathParams.map((name) => ({
            name,
            in: "path",
            required: true,
            description: "The payment method's id, as listed by listPaymentMethods; any other value is 404 not_found.",
            schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,100}$" },
            example: "pm_2"
          })),
          ...conditionalParameters(operation)
        ]
      }),
      ...(operation.body !== undefined && {
        requestBody: {
          required: operation.body.required,
          content: {
            "application/json": {
              schema: schemaOf(operation.body.schema),
              ...(example !== undefined && { example })
            }
          }
        }
      }),
      responses
    }
  }

  const paths: JsonObject = {}
  for (const route of apiRoutes) {
    const pathParams = [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? "")
    paths[route.path] = Object.fromEntries(
      route.operations.map((operation) => [operation.method.toLowerCase(), operationObject(operation, pathParams)])
    )
  }

  return {
    openapi: "3.1.0",
    info: {
      title: "Accord API",
      version: "1.0.0",
      description:
        "Public subscription plan entries, language preferences and default payment methods. Every error is application/problem+json with a stable `code`."
    },
    servers: [{ url: options.serverUrl }],
    security: [{ bearerAuth: [] }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: definitions,
      examples: problemExampleComponents(),
      headers: {
        [REQUEST_ID_HEADER]: {
          description:
            "The request's id: the one the request sent when it is 1 to 128 characters of [A-Za-z0-9._-], else a new one. The server's log lines about the request carry it; quote it when reporting a problem.",
          schema: { type: "string", pattern: "^[A-Za-z0-9._-]{1,128}$" }
        },
        RateLimit: {
          description:
            'With a rate limit on: the quota left in the current window after this request and the seconds until it ends (draft-ietf-httpapi-ratelimit-headers-10), e.g. "default";r=3;t=2.',
          schema: { type: "string" }
        },
        "RateLimit-Policy": {
          description:
            'With a rate limit on: requests per window and the window in seconds (draft-ietf-httpapi-ratelimit-headers-10), e.g. "default";q=5;w=5.',
          schema: { type: "string" }
        },
        [ETAG_HEADER]: {
          description:
            "Strong entity tag of this representation's exact bytes; it changes whenever the representation changes. Send it back in If-None-Match (GET) or If-Match (PUT).",
          schema: { type: "string", pattern: '^"[0-9a-f]{16}-[0-9a-f]+"$' }
        }
      },
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "`Authorization: Bearer <token>` (or `Token <token>`). Tokens: 1-512 of `[A-Za-z0-9._~+/-]` then any `=`."
        }
      }
    }
  }
}
