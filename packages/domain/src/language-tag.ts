import { getCanonicalLocales } from "@formatjs/intl-getcanonicallocales"
import { Schema, SchemaTransformation } from "effect"
import { boundedMemo } from "./values/bounded-memo.js"
import { LanguageTagInput } from "./values/language.js"

/**
 * The form a language tag is stored in: canonical by the CLDR alias data that `@formatjs/intl-getcanonicallocales`
 * ships, not by the engine's `Intl`: each engine carries its own locale data (Node maps `tl` to `fil`, Bun keeps
 * `tl`), and instances on two runtimes sharing one database must store the same string (docs/api.md, "Precise
 * rules"). Whether a tag is one at all is the contract's rule (`LanguageTagInput`, the grammar of the library's own
 * parser): a tag it accepts always has a canonical form, and would be kept as sent should the library disagree.
 */
const canonicalForm = (tag: string): string => {
  try {
    return getCanonicalLocales(tag)[0] ?? tag
  } catch {
    return tag
  }
}

/** A BCP 47 language tag in its canonical form (`EN-us` -> `en-US`, `iw` -> `he`) whatever the runtime. */
export const LanguageTag = LanguageTagInput.pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transform({
      decode: (tag: string): string => canonicalLanguageTag(tag),
      encode: (tag: string) => tag
    })
  ),
  Schema.brand("LanguageTag")
)
export type LanguageTag = typeof LanguageTag.Type

/**
 * The stored form of a tag the contract accepted (a decoded body's `language`). Its answers are kept because a call
 * costs about a microsecond and the same few tags arrive again and again.
 */
export const canonicalLanguageTag = boundedMemo(512, (tag: string): LanguageTag => LanguageTag.make(canonicalForm(tag)))
