import { Schema, SchemaTransformation } from "effect"
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

const CheckedTag = Schema.String.check(
  Schema.isMinLength(1, issue("too_short", "must not be empty")).abort(),
  Schema.isMaxLength(MAX_LENGTH, issue("too_long", `must be at most ${MAX_LENGTH} characters`)).abort(),
  Schema.makeFilter<string>((tag) => canonicalise(tag) !== undefined, {
    ...issue("invalid_format", "must be a BCP 47 language tag such as en-US"),
    toJsonSchema: () => ({})
  }).abort()
).annotate({ identifier: "LanguageTag", examples: ["en", "en-US", "pt-BR"] })

/** A BCP 47 language tag, stored in the canonical form `Intl.getCanonicalLocales` returns (`EN-us` -> `en-US`). */
export const LanguageTag = CheckedTag.pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transform({ decode: (tag: string) => canonicalise(tag) ?? tag, encode: (tag: string) => tag })
  ),
  Schema.brand("LanguageTag")
)
export type LanguageTag = typeof LanguageTag.Type
