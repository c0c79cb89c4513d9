import type { PaymentMethod } from "@accord/domain"
import { ALIAS_DEPRECATED_AT, ALIAS_SUNSET_AT } from "../deprecation.js"
import { issue, PaymentMethodId } from "@accord/domain/values"
import { Schema } from "effect"
import { defineOperation, type DocsOf } from "../operation.js"
import { StrictBoolean } from "../wire/boolean.js"
import { Timestamp, toTimestamp } from "../wire/timestamp.js"

// docs/api.md, "Set default payment method (PUT)", and the list.

const isTrue = (value: boolean): value is true => value
const NOT_ALLOWED = issue("not_allowed", "may only be true")
// Once in the JSON Schema (the OpenAPI document), from the decoded side's check.
const ONLY_TRUE = { ...NOT_ALLOWED, toJsonSchema: () => ({ const: true }) }

/**
 * `is_default` may only confirm the operation: `false` would ask for something this route does not do. Checked on a
 * boolean, so that `"true"` is `invalid_type` and `false` is `not_allowed` (docs/api.md), and typed `true` on both
 * sides, so that a client cannot even write `false`: `Schema.refine` narrows the decoded side only, so the encoded
 * side is narrowed by the same guard through `flip`.
 */
const OnlyTrue = Schema.flip(
  Schema.flip(StrictBoolean.pipe(Schema.refine(isTrue, NOT_ALLOWED))).pipe(Schema.refine(isTrue, ONLY_TRUE))
)

/** Set-default body: `{}` or `{"is_default": true}`; no body at all counts as `{}`. */
export const SetDefaultBody = Schema.Struct({ is_default: Schema.optionalKey(OnlyTrue) }).annotate({
  identifier: "PaymentMethodUpdate"
})

export const PaymentMethodView = Schema.Struct({
  id: Schema.String,
  is_default: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotate({ identifier: "PaymentMethod" })
export type PaymentMethodView = typeof PaymentMethodView.Type

export const PaymentMethodList = Schema.Struct({ data: Schema.Array(PaymentMethodView) }).annotate({
  identifier: "PaymentMethodList"
})
export type PaymentMethodList = typeof PaymentMethodList.Type

/** The wire form of a payment method. */
export const toPaymentMethodView = (method: PaymentMethod): PaymentMethodView => ({
  id: method.id,
  is_default: method.isDefault,
  created_at: toTimestamp(method.createdAt),
  updated_at: toTimestamp(method.updatedAt)
})

/** The served API reference page, which shows the alias deprecated (`Link: <...>; rel="deprecation"`). */
const VERSIONING_DOCS = "/docs"

export const paymentOperations = {
  listPaymentMethods: defineOperation({
    operationId: "listPaymentMethods",
    method: "GET",
    path: "/payments/v1/payment-methods/",
    access: "user",
    success: { status: 200, schema: PaymentMethodList },
    errors: ["Unavailable"],
    conditional: "ifNoneMatch",
    records: { lists: "payment_methods" }
  }),
  setDefaultPaymentMethod: defineOperation({
    operationId: "setDefaultPaymentMethod",
    method: "PUT",
    path: "/payments/v1/payment-methods/{id}/",
    access: "user",
    // The body only confirms the operation (`{}` or `{"is_default": true}`); the id says which method.
    body: { schema: SetDefaultBody, required: false },
    params: Schema.Struct({ id: PaymentMethodId }),
    success: { status: 200, schema: PaymentMethodView },
    errors: ["NotFound", "PreconditionFailed", "Unavailable"],
    conditional: "ifMatch",
    // The method named becomes the default; the caller's previous default (if any) is one no more.
    records: { updates: "payment_methods", item: "id", sets: { is_default: true }, exclusive: true },
    // The spec also writes this path without its area; its callers are served, and told it goes away
    // (docs/api.md, "Versioning"). The server's --alias-deprecation and --alias-sunset set its dates.
    aliases: [
      {
        id: "setDefaultPaymentMethodV1Alias",
        path: "/v1/payment-methods/{id}/",
        deprecation: { deprecatedAt: ALIAS_DEPRECATED_AT, sunsetAt: ALIAS_SUNSET_AT, docs: VERSIONING_DOCS }
      }
    ]
  })
}

const METHOD_CREATED = "2026-11-21T10:00:00.000Z"
const METHOD_CHANGED = "2026-11-21T10:05:00.000Z"

export const paymentDocs: DocsOf<typeof paymentOperations> = {
  listPaymentMethods: {
    tag: "payments",
    summary: "List the user's payment methods, ordered by id",
    description:
      'Every payment method of the caller, as `{"data": [...]}`, ordered by id in code-point order; at most one has `is_default: true`. Needs a user credential.',
    successExample: {
      data: [
        { id: "pm_1", is_default: false, created_at: METHOD_CREATED, updated_at: METHOD_CHANGED },
        { id: "pm_2", is_default: true, created_at: METHOD_CREATED, updated_at: METHOD_CHANGED }
      ]
    }
  },
  setDefaultPaymentMethod: {
    tag: "payments",
    summary: "Set one of the user's payment methods as the default",
    description:
      'Makes the method `{id}` the caller\'s default and the previous default (if any) not, atomically: a user never has two defaults. The body is optional: none, `{}` or `{"is_default": true}` (`false` is 400). An id that does not exist, belongs to another user or is not 1 to 100 characters of `[A-Za-z0-9_-]` is 404. Repeating it changes nothing and returns the same method. Needs a user credential.',
    params: {
      id: {
        description: "The payment method's id, as listed by listPaymentMethods; any other value is 404 not_found.",
        example: "pm_2"
      }
    },
    requestExample: { is_default: true },
    successExample: { id: "pm_2", is_default: true, created_at: METHOD_CREATED, updated_at: METHOD_CHANGED },
    validationExample: {
      request: { is_default: false },
      errors: [{ pointer: "/is_default", code: "not_allowed", detail: "may only be true" }]
    }
  }
}
