import { Effect, Schema } from "effect"
import { ClientId, UserId } from "./values/ids.js"
import { PaymentMethodId } from "./values/payment-method-id.js"
import { TOKEN_PATTERN } from "./values/token.js"

const Token = Schema.String.check(
  Schema.isPattern(TOKEN_PATTERN, { message: "a token must match [A-Za-z0-9._~+/-]{1,512}=*" })
)
/** A list that may be left out of the seed file. */
const OptionalList = <S extends Schema.Top>(item: S) =>
  Schema.Array(item).pipe(Schema.withDecodingDefaultKey(Effect.succeed([])))

/**
 * Initial data loaded into a store at start. Loading inserts what is missing and never changes existing rows, so a
 * restart keeps what the API changed.
 */
export const Seed = Schema.Struct({
  users: OptionalList(Schema.Struct({ id: UserId, token: Token })),
  clients: OptionalList(Schema.Struct({ id: ClientId, token: Token })),
  payment_methods: OptionalList(
    Schema.Struct({
      id: PaymentMethodId,
      user_id: UserId,
      is_default: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(false)))
    })
  )
}).annotate({ identifier: "Seed" })
export type Seed = typeof Seed.Type
export type SeedInput = typeof Seed.Encoded

/** What a seed load did, for the start-up log. */
export interface SeedReport {
  readonly credentialsAdded: number
  readonly paymentMethodsAdded: number
}
