import { Effect } from "effect"
import { planEntryCreated } from "../events.js"
import type { PlanEntry, PlanEntrySignUp } from "../plan-entry.js"
import { emailKey, type Email } from "../values/email.js"
import { PasswordHasher } from "../ports/password-hasher.js"
import { PlanEntries } from "../ports/plan-entries.js"
import { now } from "./now.js"

/**
 * Creates a public plan entry from a checked address and password. The password is hashed before anything is looked
 * up, so a known email costs the same time and gets the same answer as a new one (no enumeration), and the first
 * entry's password is never overwritten. No span of its own: a tracing host wraps every use case in one named by
 * its operation (docs/operations.md, "Traces"), with the hasher's and the store's spans as its children.
 */
export const createPublicPlanEntry = Effect.fnUntraced(function* (entry: PlanEntrySignUp) {
  const hasher = yield* PasswordHasher
  const entries = yield* PlanEntries
  const passwordHash = yield* hasher.hash(entry.password)
  const stored: PlanEntry = { email: entry.email, emailKey: emailKey(entry.email), passwordHash, createdAt: yield* now }
  // Recorded only when the entry is new: a known email changes nothing, so it tells nobody anything.
  yield* entries.insertIfAbsent(stored, [planEntryCreated(stored)])
  const created: { readonly email: Email } = { email: entry.email }
  return created
})
