import type { Email } from "@accord/contract"
import type { PasswordHash } from "./password.js"

/** What is stored for a public plan entry: never the password itself. */
export interface PlanEntry {
  readonly email: Email
  /** Uniqueness key: the whole address lower-cased. */
  readonly emailKey: string
  readonly passwordHash: PasswordHash
  readonly createdAt: Date
}
