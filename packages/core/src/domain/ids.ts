import { Schema } from "effect"

/** A user's id as the authenticator knows it; opaque to Accord. */
export const UserId = Schema.NonEmptyString.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

/** An application (client) credential's id; a client has no user. */
export const ClientId = Schema.NonEmptyString.pipe(Schema.brand("ClientId"))
export type ClientId = typeof ClientId.Type

const PAYMENT_METHOD_ID = /^[A-Za-z0-9_-]{1,100}$/

/** Payment method ids: 1 to 100 characters of `[A-Za-z0-9_-]`. */
export const PaymentMethodId = Schema.String.check(Schema.isPattern(PAYMENT_METHOD_ID))
  .pipe(Schema.brand("PaymentMethodId"))
  .annotate({ identifier: "PaymentMethodId" })
export type PaymentMethodId = typeof PaymentMethodId.Type
