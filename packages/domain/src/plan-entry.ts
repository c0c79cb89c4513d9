import type { Email } from "./values/email.js"
import type { Password, PasswordHash } from "./values/password.js"

/** A sign-up as the use case takes it: a checked address and password (docs/api.md, "Create a public plan entry"). */
export interface PlanEntrySignUp {
  readonly email: Email
  readonly password: Password
}

/** What is stored for a public plan entry: never the password itself. */
export interface PlanEntry {
  readonly email: Email
  /** Uniqueness key: the whole address lower-cased. */
  readonly emailKey: string
  readonly passwordHash: PasswordHash
  readonly createdAt: Date
}
