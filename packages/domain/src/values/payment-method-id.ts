import { Schema } from "effect"

const PAYMENT_METHOD_ID = /^[A-Za-z0-9_-]{1,100}$/

/** Payment method ids: 1 to 100 characters of `[A-Za-z0-9_-]`; in a path, anything else is no payment method (404). */
export const PaymentMethodId = Schema.String.check(
  // The pattern in the JSON Schema too (a path parameter's, in the OpenAPI document).
  Schema.isPattern(PAYMENT_METHOD_ID, { toJsonSchema: () => ({ pattern: PAYMENT_METHOD_ID.source }) })
)
  .pipe(Schema.brand("PaymentMethodId"))
  .annotate({ identifier: "PaymentMethodId" })
export type PaymentMethodId = typeof PaymentMethodId.Type
