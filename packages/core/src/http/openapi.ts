import { JsonSchema, Schema, SchemaRepresentation } from "effect"
import { WireInt } from "../domain/wire-int.js"
import { FIELD_ISSUE_CODES } from "../domain/field-issue.js"
import { errorStatusesOf, PROBLEM_CODES, REASON_PHRASES } from "./problem.js"
import { apiRoutes, type Operation } from "./routes.js"

const FieldProblem = Schema.Struct({
  pointer: Schema.String.annotate({ description: "JSON pointer to the field, e.g. /email" }),
  code: Schema.Literals(FIELD_ISSUE_CODES),
  detail: Schema.String
}).annotate({ identifier: "FieldProblem" })

/** The problem+json body every error carries (RFC 9457), as docs/api.md ("Errors") fixes it. */
export const ProblemSchema = Schema.Struct({
  type: Schema.Literal("about:blank"),
  title: Schema.String,
  status: WireInt,
  detail: Schema.String,
  code: Schema.Literals(PROBLEM_CODES).annotate({
    description:
      "Stable machine-readable code (bad_request, request_timeout and headers_too_large: refused before the request was read)"
  }),
  errors: Schema.optionalKey(Schema.Array(FieldProblem))
}).annotate({ identifier: "Problem" })

type JsonObject = Record<string, unknown>

const ERROR_HEADERS: Readonly<Record<number, JsonObject>> = {
  401: { "WWW-Authenticate": { schema: { type: "string" }, description: "Bearer challenge" } },
  403: { "WWW-Authenticate": { schema: { type: "string" }, description: "Bearer challenge (insufficient_scope)" } },
  429: { "Retry-After": { schema: { type: "integer" }, description: "Seconds until the credential may send again" } },
  503: { "Retry-After": { schema: { type: "integer" }, description: "Seconds to wait before retrying" } }
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
    const responses: JsonObject = {
      [operation.success.status]: {
        description: REASON_PHRASES[operation.success.status],
        content: { "application/json": { schema: schemaOf(operation.success.schema) } }
      }
    }
    for (const status of errorStatusesOf(operation)) {
      responses[status] = {
        description: REASON_PHRASES[status],
        ...(ERROR_HEADERS[status] !== undefined && { headers: ERROR_HEADERS[status] }),
        content: { "application/problem+json": { schema: problemRef } }
      }
    }
    return {
      operationId: operation.operationId,
      summary: operation.summary,
      ...(credentialed ? { security: [{ bearerAuth: [] }] } : { security: [] }),
      ...(pathParams.length > 0 && {
        parameters: pathParams.map((name) => ({
          name,
          in: "path",
          required: true,
          schema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,100}$" }
        }))
      }),
      ...(operation.body !== undefined && {
        requestBody: {
          required: operation.body.required,
          content: { "application/json": { schema: schemaOf(operation.body.schema) } }
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
    paths,
    components: {
      schemas: definitions,
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "Authorization: Bearer <token> (or Token <token>). Tokens: 1-512 of [A-Za-z0-9._~+/-] then any '='."
        }
      }
    }
  }
}
