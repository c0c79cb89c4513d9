import { JsonSchema, type Schema, SchemaAST, SchemaRepresentation } from "effect"
import { answerHeadersOf, errorStatusesOf, LATER_ANSWERS_CARRY, problemCodesOf, readHeadersOf } from "./checks.js"
import { PROBLEM_EXAMPLES, validationProblemExample } from "./examples.js"
import type { ErasedOperationDocs, Operation, OperationTag } from "./operation.js"
import { EVENT_DOCS } from "./event-docs.js"
import { EVENT_ENVELOPES, EVENT_TYPES } from "./events.js"
import { OPERATION_DOCS } from "./operation-docs.js"
import { deprecationHeaderValue, sunsetHeaderValue, type Deprecation } from "./deprecation.js"
import { aliasRoutes, apiRoutes } from "./operations.js"
import { PROBLEMS, ProblemSchema, REASON_PHRASES, type ProblemCode } from "./problems.js"

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

/** The rate limit's headers, which every later answer of a credentialed operation carries (checks.ts). */
const RATE_LIMIT_HEADERS = Object.fromEntries(
  LATER_ANSWERS_CARRY.map((name) => [name, { $ref: `#/components/headers/${name}` }])
)
const ETAG_HEADER = "ETag"
const etagRef = { $ref: `#/components/headers/${ETAG_HEADER}` }

/** What every webhook's description ends with: how it is sent (docs/operations.md, "Events"). */
const WEBHOOK_DELIVERY =
  "Sent at least once to each endpoint (`--webhook-url`), retried with exponential back-off; deduplicate by `id` (also `webhook-id`). Verify the signature before trusting the body (`verifyWebhook` in `@accord/client/webhooks`)."

/** The Standard Webhooks headers every delivery carries. */
const WEBHOOK_HEADERS: ReadonlyArray<JsonObject> = [
  {
    name: "webhook-id",
    in: "header",
    required: true,
    description: "The event's id: the same on every attempt.",
    schema: { type: "string" }
  },
  {
    name: "webhook-timestamp",
    in: "header",
    required: true,
    description: "Seconds since the Unix epoch when this attempt was signed; refuse one too far from now.",
    schema: { type: "string", pattern: "^[0-9]+$" }
  },
  {
    name: "webhook-signature",
    in: "header",
    required: true,
    description:
      "Space-separated `v1,<base64>`: HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>` under each current secret (several during a rotation).",
    schema: { type: "string" }
  }
]

/** The request headers an operation's checks read (checks.ts), as OpenAPI parameters. */
const conditionalParameters = (operation: Operation): ReadonlyArray<JsonObject> =>
  readHeadersOf(operation).map(({ name, description }) => ({
    name,
    in: "header",
    required: false,
    description,
    schema: { type: "string" }
  }))

/** What the streamed representation is, on the wire (docs/api.md, "Events"). */
const STREAM_DESCRIPTION =
  "Server-Sent Events: `retry: 2000` first, then one block per event, `id: <its id>` and `data: <its envelope as JSON>`, and a `: heartbeat` comment every 15 seconds (by default). Resume with Last-Event-ID."

/** The request headers of an operation that streams: which representation, and where a stream resumes. */
const STREAM_PARAMETERS: ReadonlyArray<JsonObject> = [
  {
    name: "Accept",
    in: "header",
    required: false,
    description:
      "text/event-stream for the live stream of the same items (Server-Sent Events); application/json or none for the JSON answer; anything else is 406 not_acceptable.",
    schema: { type: "string" }
  },
  {
    name: "Last-Event-ID",
    in: "header",
    required: false,
    description:
      "With text/event-stream: the id of the last event received; the stream resumes after it (before the after query). Validated as after.",
    schema: { type: "string" }
  }
]

/** The headers an operation's problems with `status` carry (checks.ts), as OpenAPI response headers. */
const errorHeaders = (operation: Operation, status: number): JsonObject =>
  Object.fromEntries(
    Object.entries(answerHeadersOf(operation, status)).map(([name, { description, type }]) => [
      name,
      { schema: { type }, description }
    ])
  )

/** An operation's docs and examples (operations/*.ts); the table and OPERATION_DOCS have the same keys. */
const docsOf = (operation: Operation): ErasedOperationDocs => {
  const docs = (OPERATION_DOCS as Readonly<Record<string, ErasedOperationDocs>>)[operation.operationId]
  if (docs === undefined) throw new Error(`${operation.operationId} has no entry in OPERATION_DOCS`)
  return docs
}

/** The headers a deprecated operation's or alias's answers carry (docs/api.md, "Versioning"), as `components.headers`. */
const DEPRECATION_HEADER_OBJECTS = {
  Deprecation: {
    description:
      "RFC 9745: when this operation or path was (or will be) deprecated, a Structured Field Date: `@` and the Unix seconds.",
    schema: { type: "string", pattern: "^@-?[0-9]{1,15}$" }
  },
  Sunset: {
    description:
      "RFC 8594: when this path stops being answered (from then on, 410 `gone`), an HTTP-date (IMF-fixdate); never before the deprecation.",
    schema: { type: "string" }
  },
  Link: {
    description:
      'RFC 8288: the successor to call instead (`rel="successor-version"`), and a page about the deprecation (`rel="deprecation"`).',
    schema: { type: "string" }
  }
} as const

const deprecationHeaderRefs = (deprecation: Deprecation): JsonObject =>
  Object.fromEntries(
    (["Deprecation", ...(deprecation.sunsetAt === undefined ? [] : ["Sunset"]), "Link"] as const).map((name) => [
      name,
      { $ref: `#/components/headers/${name}` }
    ])
  )

/**
 * An operation object marked deprecated: `deprecated: true`, the deprecation's headers on every response, its dates
 * in the description (the defaults: a server may be started with others); for an alias, its own operationId, and
 * its 410 past the sunset.
 */
const deprecatedObject = (
  object: JsonObject,
  deprecation: Deprecation,
  alias?: { readonly operationId: string; readonly successor: string }
): JsonObject => {
  const refs = deprecationHeaderRefs(deprecation)
  const responses: Record<string, JsonObject> = Object.fromEntries(
    Object.entries(object["responses"] as Readonly<Record<string, JsonObject>>).map(([status, response]) => [
      status,
      { ...response, headers: { ...(response["headers"] as JsonObject | undefined), ...refs } }
    ])
  )
  const dates =
    `Deprecated since ${deprecationHeaderValue(deprecation.deprecatedAt)} (${deprecation.deprecatedAt.toISOString()})` +
    (deprecation.sunsetAt === undefined ? "." : `; sunset ${sunsetHeaderValue(deprecation.sunsetAt)}.`)
  if (alias === undefined)
    return { ...object, deprecated: true, description: `${String(object["description"])} ${dates}`, responses }
  responses[410] = {
    description: `${REASON_PHRASES[410]}: problem code \`gone\`, past the sunset`,
    headers: { [REQUEST_ID_HEADER]: requestIdRef, ...refs },
    content: {
      "application/problem+json": {
        schema: { $ref: "#/components/schemas/Problem" },
        examples: { gone: { $ref: "#/components/examples/gone" } }
      }
    }
  }
  return {
    ...object,
    operationId: alias.operationId,
    summary: `${String(object["summary"])} (deprecated path)`,
    description:
      `A deprecated path of the same operation: call ${alias.successor} instead; the answers are the same, with ` +
      `Deprecation, Sunset and Link. ${dates} Past the sunset it answers 410 \`gone\`. The dates shown are the ` +
      "defaults; a server may be started with others (--alias-deprecation, --alias-sunset).",
    deprecated: true,
    responses
  }
}

/** The name of a problem example in `components.examples`: the code, and the operation for `validation_failed`. */
const problemExampleName = (operation: Operation, code: ProblemCode): string =>
  code === "validation_failed" ? `${code}.${operation.operationId}` : code

/** The problem examples (examples.ts) some operation answers with, by `problemExampleName`: `components.examples`. */
const problemExampleComponents = (): Readonly<Record<string, JsonObject>> => {
  const components: Record<string, JsonObject> = {}
  for (const route of apiRoutes)
    for (const operation of route.operations)
      for (const code of problemCodesOf(operation)) {
        const validation = docsOf(operation).validationExample
        const value =
          code === "validation_failed"
            ? validation === undefined
              ? undefined
              : validationProblemExample(validation)
            : PROBLEM_EXAMPLES[code]
        if (value !== undefined) components[problemExampleName(operation, code)] = { summary: code, value }
      }
  // A retired alias's 410 (docs/api.md, "Versioning"), which no operation of the route table answers.
  if (aliasRoutes.length > 0) components["gone"] = { summary: "gone", value: PROBLEM_EXAMPLES.gone }
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
    if (PROBLEMS[code].status === status)
      examples[code] = { $ref: `#/components/examples/${problemExampleName(operation, code)}` }
  return examples
}

/** "Reason Phrase: problem code `a` or `b`": the problem codes (problemCodesOf) this operation answers with this status. */
const errorDescription = (operation: Operation, status: number): string => {
  const codes = problemCodesOf(operation)
    .filter((code) => PROBLEMS[code].status === status)
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
      if (operation.success.schema !== undefined) named.push(operation.success.schema)
      if (operation.body !== undefined) named.push(operation.body.schema)
      if (operation.stream !== undefined) named.push(operation.stream.schema)
    }
  }
  for (const type of EVENT_TYPES) named.push(EVENT_ENVELOPES[type])
  const compiled = JsonSchema.toMultiDocumentOpenApi3_1(
    SchemaRepresentation.toJsonSchemaMultiDocument(
      SchemaRepresentation.toRepresentations(named.map((schema) => schema.ast) as [never, ...Array<never>]),
      { onExcessProperty: "error" }
    )
  )
  const definitions = compiled.definitions
  const schemaOf = (schema: Schema.Top): JsonSchema.JsonSchema => compiled.schemas[named.indexOf(schema)] ?? {}
  /**
   * A path or query parameter's schema, written out in place (a parameter is plain text, not a shared definition). A
   * query parameter by its decoded side: its text is the value as a client writes it (OpenAPI's `form` style), so a
   * `QueryInt` is `type: integer` with its bounds, which a generated client types as a number.
   */
  const parameterSchema = (operation: Operation, where: "params" | "query", name: string): JsonSchema.JsonSchema => {
    const field = operation[where]?.fields[name]
    if (field === undefined) throw new Error(`${operation.operationId}: the parameter ${name} has no Schema`)
    const ast = where === "query" ? SchemaAST.toType(field.ast) : field.ast
    const single = JsonSchema.toMultiDocumentOpenApi3_1(
      SchemaRepresentation.toJsonSchemaMultiDocument(SchemaRepresentation.toRepresentations([ast] as [never]))
    )
    const schema = single.schemas[0] ?? {}
    const ref = typeof schema["$ref"] === "string" ? schema["$ref"].split("/").at(-1) : undefined
    return ref === undefined ? schema : (single.definitions[ref] ?? schema)
  }
  const problemRef = schemaOf(ProblemSchema)
  /** A path parameter (required) or a query parameter (optional), with its docs and schema. */
  const parameterObject = (operation: Operation, where: "params" | "query", name: string): JsonObject => {
    const docs = docsOf(operation)[where]?.[name]
    return {
      name,
      in: where === "params" ? "path" : "query",
      required: where === "params",
      description: docs?.description,
      schema: parameterSchema(operation, where, name),
      example: docs?.example
    }
  }

  const operationObject = (operation: Operation, pathParams: ReadonlyArray<string>): JsonObject => {
    const credentialed = operation.access !== "public"
    // A credentialed operation's answers carry the rate limit's headers when the host runs one (docs/api.md, "Rate limit").
    const limitHeaders = credentialed ? RATE_LIMIT_HEADERS : {}
    const successHeaders: JsonObject =
      operation.conditional === undefined
        ? { [REQUEST_ID_HEADER]: requestIdRef, ...limitHeaders }
        : { [REQUEST_ID_HEADER]: requestIdRef, [ETAG_HEADER]: etagRef, ...limitHeaders }
    const { status, schema } = operation.success
    // A 204 has no body: no content to describe (docs/api.md, "Precise rules").
    const responses: JsonObject = {
      [status]: {
        description: REASON_PHRASES[status],
        headers: successHeaders,
        ...(schema !== undefined && {
          content: {
            "application/json": { schema: schemaOf(schema), example: docsOf(operation).successExample },
            // The streamed representation (docs/api.md, "Events"), its schema one event of the stream (OpenAPI 3.2's
            // `itemSchema`, which 3.1 does not have): its `id` and its `data`, one item.
            ...(operation.stream !== undefined && {
              [operation.stream.mediaType]: {
                schema: {
                  type: "object",
                  description: STREAM_DESCRIPTION,
                  required: ["id", "data"],
                  properties: {
                    id: { type: "string", description: "The item's id: the cursor a client resumes after" },
                    data: schemaOf(operation.stream.schema)
                  }
                }
              }
            })
          }
        })
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
          ...errorHeaders(operation, status),
          ...(credentialed && status !== 401 && limitHeaders)
        },
        content: {
          "application/problem+json": { schema: problemRef, examples: problemExamples(operation, status) }
        }
      }
    }
    const docs = docsOf(operation)
    const example = docs.requestExample
    const queryParams = operation.query === undefined ? [] : Object.keys(operation.query.fields)
    return {
      operationId: operation.operationId,
      tags: [docs.tag],
      summary: docs.summary,
      description: docs.description,
      ...(credentialed ? { security: [{ bearerAuth: [] }] } : { security: [] }),
      ...((pathParams.length > 0 ||
        queryParams.length > 0 ||
        operation.conditional !== undefined ||
        operation.stream !== undefined) && {
        parameters: [
          ...pathParams.map((name) => parameterObject(operation, "params", name)),
          ...queryParams.map((name) => parameterObject(operation, "query", name)),
          ...conditionalParameters(operation),
          ...(operation.stream === undefined ? [] : STREAM_PARAMETERS)
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
  const paramsOf = (path: string) => [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? "")
  for (const route of apiRoutes) {
    const pathParams = paramsOf(route.path)
    paths[route.path] = Object.fromEntries(
      route.operations.map((operation) => {
        const object = operationObject(operation, pathParams)
        const marked = operation.deprecation === undefined ? object : deprecatedObject(object, operation.deprecation)
        return [operation.method.toLowerCase(), marked]
      })
    )
  }
  // docs/api.md, "Versioning": each alias as the operation it serves, marked deprecated, with its own operationId.
  for (const alias of aliasRoutes) {
    const { operation } = alias
    const object = deprecatedObject(operationObject(operation, paramsOf(alias.path)), alias.deprecation, {
      operationId: alias.id,
      successor: `${options.serverUrl}${operation.path}`
    })
    paths[alias.path] = { [operation.method.toLowerCase()]: object }
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
    // docs/api.md, "Events": what a webhook endpoint receives, one per event type, signed (Standard Webhooks).
    webhooks: Object.fromEntries(
      EVENT_TYPES.map((type) => [
        type,
        {
          post: {
            operationId: `event.${type}`,
            summary: EVENT_DOCS[type].summary,
            description: `${EVENT_DOCS[type].description} ${WEBHOOK_DELIVERY}`,
            security: [],
            parameters: WEBHOOK_HEADERS,
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: schemaOf(EVENT_ENVELOPES[type]),
                  example: {
                    specversion: "1.0",
                    id: "019a4f6e-3c2b-7d40-9a1e-5f6b7c8d9e0f",
                    source: "/api",
                    type,
                    time: "2026-11-21T10:05:00.000Z",
                    subject: type === "plan_entry.created" ? "plan_entries/ada@example.com" : "users/u_1",
                    sequence: 1,
                    datacontenttype: "application/json",
                    data: EVENT_DOCS[type].example
                  }
                }
              }
            },
            responses: {
              "2XX": { description: "Taken: any 2xx within the time-out marks the event delivered to this endpoint." }
            }
          }
        }
      ])
    ),
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
        ...(aliasRoutes.length > 0 || apiRoutes.some((route) => route.operations.some((o) => o.deprecation))
          ? DEPRECATION_HEADER_OBJECTS
          : {}),
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
