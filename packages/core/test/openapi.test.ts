import { readFileSync } from "node:fs"
import { Validator } from "@seriousme/openapi-schema-validator"
import { describe, expect, it } from "@effect/vitest"
import { apiRoutes, makeOpenApiDocument } from "@accord/core"

interface Doc {
  readonly openapi: string
  readonly servers: ReadonlyArray<{ readonly url: string }>
  readonly paths: Record<
    string,
    Record<string, { security: ReadonlyArray<unknown>; responses: Record<string, unknown> }>
  >
  readonly components: { readonly schemas: Record<string, Record<string, unknown>> }
}

const document = makeOpenApiDocument({ serverUrl: "/api" }) as unknown as Doc

describe("OpenAPI document", () => {
  it("is the reviewed document (regenerate openapi.expected.json only for a deliberate change, and say why)", () => {
    const expected: unknown = JSON.parse(readFileSync(new URL("./openapi.expected.json", import.meta.url), "utf8"))
    expect(makeOpenApiDocument({ serverUrl: "/api" })).toEqual(expected)
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
    const fromTable = apiRoutes.flatMap((route) =>
      route.operations.map((op) => `${op.method.toLowerCase()} ${route.path}`)
    )
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
    for (const [path, operations] of Object.entries(document.paths)) {
      for (const operation of Object.values(operations)) {
        expect(operation.security).toEqual(path === "/health" ? [] : [{ bearerAuth: [] }])
        for (const [status, response] of Object.entries(operation.responses)) {
          if (Number(status) < 400) continue
          expect(response).toMatchObject({
            content: { "application/problem+json": { schema: { $ref: "#/components/schemas/Problem" } } }
          })
        }
        if (path !== "/health") expect(Object.keys(operation.responses)).toContain("401")
        // Refusals before a request is read (request timeout, path and headers too long) apply to every operation.
        expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(["408", "414", "431"]))
      }
    }
  })
})
