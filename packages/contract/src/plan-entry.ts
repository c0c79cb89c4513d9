import { Schema } from "effect"
import { Email } from "./fields/email.js"
import { Password } from "./fields/password.js"

/** The sign-up body: `email` and `password`, both required, no other field (docs/api.md, "Precise rules"). */
export const PlanEntryBody = Schema.Struct({ email: Email, password: Password }).annotate({
  identifier: "PlanEntryCreate"
})
export type PlanEntryBody = typeof PlanEntryBody.Type

/** The password is masked in every response: SPEC's shape, none of the secret. */
export const MASKED_PASSWORD = "********"

export const PlanEntryView = Schema.Struct({
  email: Schema.String.annotate({ format: "email" }),
  password: Schema.Literal(MASKED_PASSWORD)
}).annotate({ identifier: "PlanEntry" })
export type PlanEntryView = typeof PlanEntryView.Type
