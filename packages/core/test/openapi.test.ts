import { readFileSync } from "node:fs"
import { Validator } from "@seriousme/openapi-schema-validator"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { decoderFor, FIELD_ISSUE_CODES } from "@accord/domain"
import {
  aliasRoutes,
  apiRoutes,
  makeOpenApiDocument,
  type Operation,
  operations,
  PROBLEM_CODES
} from "@accord/contract"

interface DocOperation {
  readonly operationId: string
  readonly tags: ReadonlyArray<string>
  readonly description: string
  readonly security: ReadonlyArray<unknown>
  readonly deprecated?: boolean
  readonly requestBody?: { readonly content: Record<string, { readonly example?: unknown }> }
  readonly responses: Record<string, { readonly headers?: Record<string, unknown> }>
}

interface Doc {
  readonly openapi: string
  readonly servers: ReadonlyArray<{ readonly url: string }>
  readonly tags: ReadonlyArray<{ readonly name: string; readonly description: string }>
  readonly paths: Record<string, Record<string, DocOperation>>
  readonly components: {
    readonly schemas: Record<string, Record<string, unknown>>
    readonly headers: Record<string, unknown>
  }
}

const documentOperations = (): ReadonlyArray<readonly [string, DocOperation]> =>
  Object.entries(document.paths).flatMap(([path, ops]) => Object.values(ops).map((op) => [path, op] as const))

const document = makeOpenApiDocument({ serverUrl: "/api" }) as unknown as Doc

describe("OpenAPI document", () => {
  // `npm run generate` rewrites openapi.expected.json (scripts/generate.mjs): a change to it is reviewed with its cause.
  it("is the reviewed document, openapi.expected.json", () => {
    const expected: unknown = JSON.parse(readFileSync(new URL("./openapi.expected.json", import.meta.url), "utf8"))
    expect(makeOpenApiDocument({ serverUrl: "/api" }), "out of date: run `npm run generate`").toEqual(expected)
  })

  it("is a valid OpenAPI 3.1 document according to a real validator", async () => {
    const validator = new Validator()
    const result = await validator.validate(
      structuredClone(document) as unknown as Parameters<Validator["validate"]>[0]
    )
    expect(result.errors ?? []).toEqual([])
    expect(result.valid).toBe(true)
    expect(validator.version).toBe("3.1")
  })

  it("lists every route of the table with its methods, and the /api server", () => {
    expect(document.servers).toEqual([{ url: "/api" }])
    // The route table's paths, and each deprecated alias with its operation's method (docs/api.md, "Versioning").
    const fromTable = [
      ...apiRoutes.flatMap((route) => route.operations.map((op) => `${op.method.toLowerCase()} ${route.path}`)),
      ...aliasRoutes.map((alias) => `${alias.operation.method.toLowerCase()} ${alias.path}`)
    ]
    const fromDocument = Object.entries(document.paths).flatMap(([path, ops]) =>
      Object.keys(ops).map((m) => `${m} ${path}`)
    )
    expect(fromDocument.sort()).toEqual(fromTable.sort())
    expect(Object.keys(document.paths)).toContain("/payments/v1/payment-methods/{id}/")
  })

  it("carries the field bounds the decoders enforce", () => {
    const schemas = document.components.schemas
    expect(schemas["Email"]).toMatchObject({ type: "string", maxLength: 254 })
    expect(schemas["Password"]).toMatchObject({ minLength: 8, maxLength: 128 })
    expect(schemas["LanguageTag"]).toMatchObject({ maxLength: 35 })
    expect(schemas["TimezoneOffset"]).toMatchObject({ type: "integer", minimum: -720, maximum: 840, multipleOf: 15 })
    expect(schemas["PreferencesUpdate"]).toMatchObject({ additionalProperties: false })
  })

  it("references the bearer scheme on every credentialed operation and the problem schema on every error", () => {
    // The health route and the probes under it need no credential.
    const publicPaths = new Set(["/health", "/health/live", "/health/ready"])
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const operation of Object.values(operations)) {
        const isPublic = publicPaths.has(path)
        expect(operation.security).toEqual(isPublic ? [] : [{ bearerAuth: [] }])
        for (const [status, response] of Object.entries(operation.responses)) {
          if (Number(status) < 400) continue
          expect(response).toMatchObject({
            content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } }
          })
        }
        if (!isPublic) expect(Object.keys(operation.responses)).toContain("401")
        // Refusals before a request is read (request timeout, path and headers too long) apply to every operation.
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["408", "414", "431"]))
      }
    }
  })

  it("keeps every operationId of the route table, then each alias's own", () => {
    expect(documentOperations().map(([, op]) => op.operationId)).toEqual([
      ...Object.keys(operations),
      ...aliasRoutes.map((alias) => alias.id)
    ])
  })

  it("marks each alias deprecated, documents its headers on every response, and its 410 gone", () => {
    for (const alias of aliasRoutes) {
      const object = document.paths[alias.path]?.[alias.operation.method.toLowerCase()]
      expect(object?.deprecated).toBe(true)
      expect(Object.keys(object?.responses ?? {})).toContain("410")
      for (const response of Object.values(object?.responses ?? {}))
        expect(Object.keys(response.headers ?? {})).toEqual(expect.arrayContaining(["Deprecation", "Sunset", "Link"]))
    }
    // The operation's own path is not deprecated.
    expect(document.paths["/payments/v1/payment-methods/{id}/"]?.["put"]?.deprecated).toBeUndefined()
  })

  it("tags every operation with one area described at the document level, and describes every operation", () => {
    expect(document.tags.map((tag) => tag.name)).toEqual(["plans", "users", "payments", "service"])
    for (const tag of document.tags) expect(tag.description.length).toBeGreaterThan(0)
    for (const [, op] of documentOperations()) {
      expect(op.tags).toHaveLength(1)
      expect(document.tags.map((tag) => tag.name)).toContain(op.tags[0])
      expect(op.description.length).toBeGreaterThan(0)
    }
  })

  it("documents X-Request-Id on every response and 500 problem+json on every operation", () => {
    expect(document.components.headers).toHaveProperty("X-Request-Id")
    for (const [, op] of documentOperations()) {
      expect(op.responses["500"]).toMatchObject({
        content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } }
      })
      for (const response of Object.values(op.responses))
        expect(response.headers?.["X-Request-Id"]).toEqual({ $ref: "#/components/headers/X-Request-Id" })
    }
  })

  it("gives Problem.code and each field issue's code as enums of every code", () => {
    const problem = document.components.schemas["Problem"] as { properties: { code: { enum: unknown } } }
    expect(problem.properties.code.enum).toEqual(PROBLEM_CODES)
    const field = document.components.schemas["FieldProblem"] as { properties: { code: { enum: unknown } } }
    expect(field.properties.code.enum).toEqual(FIELD_ISSUE_CODES)
  })

  it("gives every request body an example that its operation's own decoder accepts", () => {
    for (const operation of Object.values(operations) as ReadonlyArray<Operation>) {
      const inDocument = documentOperations().find(([, op]) => op.operationId === operation.operationId)?.[1]
      const example = inDocument?.requestBody?.content["application/json"]?.example
      if (operation.body === undefined) {
        expect(inDocument?.requestBody).toBeUndefined()
        continue
      }
      expect(example, operation.operationId).toBeDefined()
      // The handler's own decoding (decoderFor: unknown fields refused), so the example is a request it accepts.
      const decoded = Effect.runSyncExit(decoderFor(operation.body.schema)(example))
      expect(Exit.isSuccess(decoded), `${operation.operationId}: ${String(decoded)}`).toBe(true)
    }
  })

  it("marks the read-only fields readOnly with a schema every JSON value satisfies", () => {
    expect(document.components.schemas["ReadOnlyField"]).toEqual({
      readOnly: true,
      description: expect.stringContaining("ignored")
    })
    expect(updateExample()).not.toHaveProperty("id")
  })
})

const updateExample = (): unknown =>
  documentOperations().find(([, op]) => op.operationId === "updateLanguagePreferences")?.[1].requestBody?.content[
    "application/json"
  ]?.example
