import { Schema } from "effect"
import { issue } from "./field-issue.js"

const MAX_LENGTH = 35

const canonicalise = (tag: string): string | undefined => {
  try {
    return Intl.getCanonicalLocales(tag)[0]
  } catch {
    return undefined
  }
}

const CheckedTag = Schema.String.pipe(
  Schema.minLength(1, issue("too_short", "must not be empty")),
  Schema.maxLength(MAX_LENGTH, issue("too_long", `must be at most ${MAX_LENGTH} characters`)),
  Schema.filter((tag) => canonicalise(tag) !== undefined, issue("invalid_format", "must be a BCP 47 language tag such as en-US"))
)

/** A BCP 47 language tag, stored in the canonical form `Intl.getCanonicalLocales` returns (`EN-us` -> `en-US`). */
export const LanguageTag = Schema.transform(CheckedTag, Schema.String, {
  strict: true,
  decode: (tag) => canonicalise(tag) ?? tag,
  encode: (tag) => tag
})
  .pipe(Schema.brand("LanguageTag"))
  .annotations({
    identifier: "LanguageTag",
    description: "a BCP 47 language tag",
    jsonSchema: { type: "string", minLength: 1, maxLength: MAX_LENGTH, examples: ["en", "en-US", "pt-BR"] }
  })
export type LanguageTag = typeof LanguageTag.Type
