import { Effect } from "effect"
import { decoderFor } from "../domain/decode.js"
import { emailKey, type Email } from "../domain/email.js"
import { PlanEntryBody } from "../domain/plan-entry.js"
import { PasswordHasher } from "../ports/password-hasher.js"
import { PlanEntries } from "../ports/plan-entries.js"
import { now } from "./now.js"

const decodeBody = decoderFor(PlanEntryBody)

/**
 * Creates a public plan entry from `{ email, password }`. The password is hashed before anything is looked up, so a
 * known email costs the same time and gets the same answer as a new one (no enumeration), and the first entry's
 * password is never overwritten. Traced, unlike the other use cases: scrypt takes tens of milliseconds on purpose, so
 * the span costs nothing noticeable and shows where the time goes.
 */
export const createPublicPlanEntry = Effect.fn("Accord.createPublicPlanEntry")(function* (input: unknown) {
  const body = yield* decodeBody(input)
  const hasher = yield* PasswordHasher
  const entries = yield* PlanEntries
  const passwordHash = yield* hasher.hash(body.password)
  yield* entries.insertIfAbsent({
    email: body.email,
    emailKey: emailKey(body.email),
    passwordHash,
    createdAt: yield* now
  })
  const created: { readonly email: Email } = { email: body.email }
  return created
})
