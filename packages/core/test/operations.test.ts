import {
  type DomainError,
  InsufficientScope,
  NotFound,
  Unauthenticated,
  Unavailable,
  ValidationError
} from "@accord/domain"
import {
  apiRoutes,
  DOMAIN_ERRORS,
  errorStatusesOf,
  operations,
  PROBLEM_CODE_STATUS,
  problemCodesOf,
  type Operation,
  type ProblemCode,
  type ProblemCodeOf
} from "@accord/contract"
import { problemOf } from "@accord/core"
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Schema } from "effect"

type Always = "bad_request" | "request_timeout" | "uri_too_long" | "headers_too_large" | "internal"
type Credentialed = "unauthenticated" | "invalid_token" | "rate_limited"
type WithBody =
  | "not_implemented"
  | "unsupported_media_type"
  | "payload_too_large"
  | "invalid_json"
  | "invalid_body"
  | "validation_failed"

const sorted = (codes: ReadonlyArray<string>) => [...codes].sort()

describe("the typed operations table", () => {
  it("keys every operation by its operationId", () => {
    for (const [key, operation] of Object.entries(operations)) expect(operation.operationId).toBe(key)
  })

  it("builds apiRoutes grouped by path: each operation once, in table order, a path exact when its operations say so", () => {
    // The table itself is docs/api.md's route table, written by `npm run generate` (docs/examples/test/api-tables.test.ts).
    const inRoutes = apiRoutes.flatMap((route) => route.operations)
    expect(inRoutes).toStrictEqual(Object.values(operations))
    expect(new Set(apiRoutes.map((route) => route.path)).size).toBe(apiRoutes.length)
    for (const route of apiRoutes) {
      for (const operation of route.operations) expect(operation.path).toBe(route.path)
      expect(route.exact).toBe(route.operations.some((operation) => operation.exact))
      expect(new Set(route.operations.map((operation) => operation.method)).size).toBe(route.operations.length)
    }
  })

  it("has a params Schema exactly where its path has parameters, with the same names", () => {
    for (const operation of Object.values(operations) as ReadonlyArray<Operation>) {
      const names = [...operation.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1])
      const params = operation.params
      if (names.length === 0) expect(params).toBeUndefined()
      else {
        expect(Schema.isSchema(params)).toBe(true)
        expect(Object.keys((params as unknown as Schema.Struct<Schema.Struct.Fields>).fields)).toStrictEqual(names)
      }
    }
  })

  it("keeps the static types of its Schemas", () => {
    expectTypeOf(operations.updateLanguagePreferences.body.schema.Encoded).toEqualTypeOf<{
      readonly language?: string
      readonly timezone?: number
      readonly mfa_enabled?: boolean
      readonly id?: unknown
      readonly created_at?: unknown
      readonly updated_at?: unknown
    }>()
    expectTypeOf(operations.setDefaultPaymentMethod.params.Encoded).toEqualTypeOf<{ readonly id: string }>()
    expectTypeOf(operations.createPublicPlanEntry.success.status).toEqualTypeOf<201>()
    expectTypeOf(operations.health.body).toEqualTypeOf<undefined>()
    expectTypeOf(operations.health.params).toEqualTypeOf<undefined>()
    expectTypeOf(operations.listPaymentMethods.access).toEqualTypeOf<"user">()
    expectTypeOf(operations.setDefaultPaymentMethod.path).toEqualTypeOf<"/payments/v1/payment-methods/{id}/">()
  })
})

describe("problem codes of an operation", () => {
  it("derives each operation's codes from its shape and declared errors (docs/api.md, Errors)", () => {
    expect(sorted(problemCodesOf(operations.health))).toStrictEqual(
      sorted(["bad_request", "request_timeout", "uri_too_long", "headers_too_large", "internal", "unavailable"])
    )
    expect(sorted(problemCodesOf(operations.getLanguagePreferences))).toStrictEqual(
      sorted([
        ...problemCodesOf(operations.health),
        "unauthenticated",
        "invalid_token",
        "rate_limited",
        "insufficient_scope"
      ])
    )
    expect(sorted(problemCodesOf(operations.createPublicPlanEntry))).toStrictEqual(
      sorted([
        ...problemCodesOf(operations.health),
        "unauthenticated",
        "invalid_token",
        "rate_limited",
        "not_implemented",
        "unsupported_media_type",
        "payload_too_large",
        "invalid_json",
        "invalid_body",
        "validation_failed"
      ])
    )
    // Liveness never calls the store, so it is never 503; readiness is, like health (docs/api.md, "Probes").
    expect(sorted(problemCodesOf(operations.liveness))).toStrictEqual(
      sorted(["bad_request", "request_timeout", "uri_too_long", "headers_too_large", "internal"])
    )
    expect(problemCodesOf(operations.readiness)).toStrictEqual(problemCodesOf(operations.health))
    expect(problemCodesOf(operations.setDefaultPaymentMethod)).toContain("not_found")
    expect(problemCodesOf(operations.updateLanguagePreferences)).not.toContain("not_found")
  })

  it("gives the same union at the type level", () => {
    expectTypeOf<ProblemCodeOf<typeof operations.health>>().toEqualTypeOf<Always | "unavailable">()
    expectTypeOf<ProblemCodeOf<typeof operations.liveness>>().toEqualTypeOf<Always>()
    expectTypeOf<ProblemCodeOf<typeof operations.readiness>>().toEqualTypeOf<Always | "unavailable">()
    expectTypeOf<ProblemCodeOf<typeof operations.createPublicPlanEntry>>().toEqualTypeOf<
      Always | Credentialed | WithBody | "unavailable"
    >()
    expectTypeOf<ProblemCodeOf<typeof operations.listPaymentMethods>>().toEqualTypeOf<
      Always | Credentialed | "insufficient_scope" | "unavailable"
    >()
    expectTypeOf<ProblemCodeOf<typeof operations.setDefaultPaymentMethod>>().toEqualTypeOf<
      Always | Credentialed | "insufficient_scope" | WithBody | "not_found" | "precondition_failed" | "unavailable"
    >()
    expectTypeOf<ProblemCodeOf<typeof operations.updateLanguagePreferences>>().toEqualTypeOf<
      | Always
      | Credentialed
      | "insufficient_scope"
      | WithBody
      | "precondition_failed"
      | "precondition_required"
      | "unavailable"
    >()
    // The erased view may be answered any code an operation can have; 417 is the standalone servers' answer before
    // any route (docs/SECURITY.md, item 16), like 405 and a retired alias's 410 no operation's.
    expectTypeOf<ProblemCodeOf<Operation>>().toEqualTypeOf<
      Exclude<ProblemCode, "method_not_allowed" | "expectation_failed" | "gone">
    >()
  })

  it("lists for each domain error the codes problemOf answers it with, each at its own status", () => {
    const errors: ReadonlyArray<DomainError> = [
      new ValidationError({ issues: [] }),
      new NotFound({ resource: "payment_method" }),
      new Unauthenticated({ reason: "missing" }),
      new Unauthenticated({ reason: "invalid_token" }),
      new InsufficientScope(),
      new Unavailable({ reason: "store_unreachable", retryAfterSeconds: 1 })
    ]
    for (const error of errors) {
      const problem = problemOf(error)
      expect(DOMAIN_ERRORS[error._tag].codes as ReadonlyArray<ProblemCode>).toContain(problem.code)
      expect(PROBLEM_CODE_STATUS[problem.code]).toBe(problem.status)
    }
  })

  it("gives the OpenAPI statuses: those of the codes, without 500 internal and 400 bad_request alone", () => {
    expect(errorStatusesOf(operations.health)).toStrictEqual([408, 414, 431, 503])
    expect(errorStatusesOf(operations.liveness)).toStrictEqual([408, 414, 431])
    // 501: a body sent with a transfer coding other than chunked (docs/api.md, "Precise rules").
    expect(errorStatusesOf(operations.setDefaultPaymentMethod)).toStrictEqual([
      400, 401, 403, 404, 408, 412, 413, 414, 415, 429, 431, 501, 503
    ])
  })
})
