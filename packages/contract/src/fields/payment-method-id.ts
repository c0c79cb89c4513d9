import { Schema } from "effect"

/**
 * Annotation key of an id's Schema: the resource its values name. A path parameter its Schema refuses names no such
 * resource, so it is that resource's 404 (docs/api.md, "Precise rules": an id outside its charset is 404).
 */
export const NAMES_RESOURCE = "accordNamesResource"

const PAYMENT_METHOD_ID = /^[A-Za-z0-9_-]{1,100}$/

/** Payment method ids: 1 to 100 characters of `[A-Za-z0-9_-]`; in a path, anything else is no payment method (404). */
export const PaymentMethodId = Schema.String.check(Schema.isPattern(PAYMENT_METHOD_ID))
  .pipe(Schema.brand("PaymentMethodId"))
  .annotate({ identifier: "PaymentMethodId", [NAMES_RESOURCE]: "payment_method" })
export type PaymentMethodId = typeof PaymentMethodId.Type
