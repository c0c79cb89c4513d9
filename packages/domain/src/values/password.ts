import { type Redacted, Schema } from "effect"
import { issue } from "./field-issue.js"

const MIN = 8
const MAX = 128
/** Lengths count code points, not UTF-16 units: an emoji is one character to the person typing it. */
const codePoints = (value: string): number => {
  let count = 0
  for (const _ of value) count++
  return count
}

const CheckedPassword = Schema.String.check(
  Schema.makeFilter<string>((value) => codePoints(value) >= MIN, {
    ...issue("too_short", `must be at least ${MIN} characters`),
    toJsonSchema: () => ({ minLength: MIN })
  }).abort(),
  Schema.makeFilter<string>((value) => codePoints(value) <= MAX, {
    ...issue("too_long", `must be at most ${MAX} characters`),
    toJsonSchema: () => ({ maxLength: MAX })
  }).abort()
).annotate({ identifier: "Password", writeOnly: true })

/** A clear-text password, wrapped in Redacted as soon as it is decoded so it cannot reach a log by accident. */
export const Password = Schema.RedactedFromValue(CheckedPassword)
export type Password = Redacted.Redacted<string>

/** A salted, slow hash of a password in the hasher's own self-describing format. */
export const PasswordHash = Schema.String.pipe(Schema.brand("PasswordHash"))
export type PasswordHash = typeof PasswordHash.Type
