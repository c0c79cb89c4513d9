import { Schema } from "effect"
import { Email } from "./email.js"
import { Password, type PasswordHash } from "./password.js"

/** What is stored for a public plan entry: never the password itself. */
export interface PlanEntry {
  readonly email: Email
  /** Uniqueness key: the whole address lower-cased. */
  readonly emailKey: string
  readonly passwordHash: PasswordHash
  readonly createdAt: Date
}

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
