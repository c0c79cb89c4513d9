import { Schema } from "effect"

/** A user's id as the authenticator knows it; opaque to Accord. */
export const UserId = Schema.NonEmptyString.pipe(Schema.brand("UserId"))
export type UserId = typeof UserId.Type

/** An application (client) credential's id; a client has no user. */
export const ClientId = Schema.NonEmptyString.pipe(Schema.brand("ClientId"))
export type ClientId = typeof ClientId.Type

/** Payment method ids: 1 to 100 characters of `[A-Za-z0-9_-]`. */
export const PaymentMethodId = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z0-9_-]{1,100}$/),
  Schema.brand("PaymentMethodId")
).annotations({ identifier: "PaymentMethodId", jsonSchema: { type: "string", pattern: "^[A-Za-z0-9_-]{1,100}$" } })
export type PaymentMethodId = typeof PaymentMethodId.Type
