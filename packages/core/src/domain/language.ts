import { Schema } from "effect"
import { boundedMemo } from "./bounded-memo.js"
import { issue } from "./field-issue.js"

const MAX_LENGTH = 35

const INVALID = ""

/**
 * `Intl.getCanonicalLocales` costs microseconds per call and is pure, and the same few tags arrive again and again,
 * so its recent answers are kept (the decoder asks twice per tag: once to check it, once to transform it). Only tags
 * that passed the length checks get here.
 */
const canonicalOrInvalid = boundedMemo(512, (tag: string): string => {
  try {
    return Intl.getCanonicalLocales(tag)[0] ?? INVALID
  } catch {
    return INVALID
  }
})

const canonicalise = (tag: string): string | undefined => {
  const canonical = canonicalOrInvalid(tag)
  return canonical === INVALID ? undefined : canonical
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
