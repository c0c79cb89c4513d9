import { Schema } from "effect"
import { ClientId, PaymentMethodId, UserId } from "./ids.js"
import { TOKEN_PATTERN } from "./token.js"

const Token = Schema.String.pipe(Schema.pattern(TOKEN_PATTERN, { message: () => "a token must match [A-Za-z0-9._~+/-]{1,512}=*" }))

/**
 * Initial data loaded into a store at start. Loading inserts what is missing and never changes existing rows, so a
 * restart keeps what the API changed.
 */
export const Seed = Schema.Struct({
  users: Schema.optionalWith(Schema.Array(Schema.Struct({ id: UserId, token: Token })), { default: () => [] }),
  clients: Schema.optionalWith(Schema.Array(Schema.Struct({ id: ClientId, token: Token })), { default: () => [] }),
  payment_methods: Schema.optionalWith(
    Schema.Array(Schema.Struct({ id: PaymentMethodId, user_id: UserId, is_default: Schema.optionalWith(Schema.Boolean, { default: () => false }) })),
    { default: () => [] }
  )
}).annotations({ identifier: "Seed" })
export type Seed = typeof Seed.Type
export type SeedInput = typeof Seed.Encoded

/** What a seed load did, for the start-up log. */
export interface SeedReport {
  readonly credentialsAdded: number
  readonly paymentMethodsAdded: number
}
