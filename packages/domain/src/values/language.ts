import { Schema } from "effect"
import { issue } from "./field-issue.js"

const MAX_LENGTH = 35

// The grammar of a language tag that docs/api.md ("Precise rules") accepts: ECMA-402's, as the parser of
// @formatjs/intl-getcanonicallocales 3.2.12 reads it (its `parseUnicodeLocaleId`, followed subtag for subtag, so that
// the tags refused here are exactly the ones that library refuses). Data-free: the canonical form, which needs the
// library's CLDR alias data, is the domain's (core's domain/language.ts), so a client never bundles that data.

const isLetter = (code: number): boolean => (code >= 65 && code <= 90) || (code >= 97 && code <= 122)
const isDigit = (code: number): boolean => code >= 48 && code <= 57

/** `min` to `max` ASCII letters, or letters and digits when `digits`. */
const isSubtag = (value: string | undefined, min: number, max: number, digits = false): boolean => {
  if (value === undefined || value.length < min || value.length > max) return false
  for (let index = 0; index < value.length; index++) {
    const code = value.charCodeAt(index)
    if (!isLetter(code) && !(digits && isDigit(code))) return false
  }
  return true
}

const isLanguageSubtag = (value: string | undefined): boolean => value?.length !== 4 && isSubtag(value, 2, 8)
const isScriptSubtag = (value: string | undefined): boolean => isSubtag(value, 4, 4)
const isThreeDigits = (value: string | undefined): boolean =>
  value?.length === 3 && isDigit(value.charCodeAt(0)) && isDigit(value.charCodeAt(1)) && isDigit(value.charCodeAt(2))
const isRegionSubtag = (value: string | undefined): boolean => isSubtag(value, 2, 2) || isThreeDigits(value)
const isVariantSubtag = (value: string | undefined): boolean =>
  isSubtag(value, 5, 8, true) || (isSubtag(value, 4, 4, true) && isDigit(value?.charCodeAt(0) ?? 0))
const isUnicodeKey = (value: string | undefined): boolean =>
  isSubtag(value, 2, 2, true) && isLetter(value?.charCodeAt(1) ?? 0)
const isTransformedKey = (value: string | undefined): boolean =>
  value?.length === 2 && isLetter(value.charCodeAt(0)) && isDigit(value.charCodeAt(1))

/** Subtags read so far; `next` is the index of the first one not read. */
interface Cursor {
  readonly subtags: ReadonlyArray<string>
  next: number
}

/** Reads subtags while `accepts` says yes; how many were read. */
const readWhile = (cursor: Cursor, accepts: (subtag: string | undefined) => boolean): number => {
  const start = cursor.next
  while (cursor.next < cursor.subtags.length && accepts(cursor.subtags[cursor.next])) cursor.next++
  return cursor.next - start
}

const isTypeSubtag = (subtag: string | undefined): boolean => isSubtag(subtag, 3, 8, true)

/** unicode_language_id: language, then an optional script and region, then variants, none twice. */
const readLanguageId = (cursor: Cursor): boolean => {
  // `root`, which the library's parser takes, is four letters: refused here as by ECMA-402 (and by the domain before).
  if (!isLanguageSubtag(cursor.subtags[cursor.next])) return false
  cursor.next++
  if (isScriptSubtag(cursor.subtags[cursor.next])) cursor.next++
  if (isRegionSubtag(cursor.subtags[cursor.next])) cursor.next++
  // A plain object, as in the library: a variant named like one of its inherited members (`toString`) counts as seen.
  let variants: Record<string, true> | undefined
  for (let variant = cursor.subtags[cursor.next]; variant !== undefined && isVariantSubtag(variant);) {
    variants ??= {}
    if (variant in variants) return false
    variants[variant] = true
    variant = cursor.subtags[++cursor.next]
  }
  return true
}

/** `-u-`: keywords (a key and its type subtags), or attributes and then keywords. */
const readUnicodeExtension = (cursor: Cursor): boolean => {
  const readKeywords = (): number => {
    let keywords = 0
    while (cursor.next < cursor.subtags.length && isUnicodeKey(cursor.subtags[cursor.next])) {
      cursor.next++
      readWhile(cursor, isTypeSubtag)
      keywords++
    }
    return keywords
  }
  if (readKeywords() > 0) return true
  const attributes = readWhile(cursor, isTypeSubtag)
  return readKeywords() + attributes > 0
}

/** `-t-`: a language id, fields (a key and at least one value subtag), or both. */
const readTransformedExtension = (cursor: Cursor): boolean => {
  const hasLanguage = isLanguageSubtag(cursor.subtags[cursor.next])
  if (hasLanguage && !readLanguageId(cursor)) return false
  let fields = 0
  while (cursor.next < cursor.subtags.length && isTransformedKey(cursor.subtags[cursor.next])) {
    cursor.next++
    if (readWhile(cursor, isTypeSubtag) === 0) return false
    fields++
  }
  return hasLanguage || fields > 0
}

/** The extensions after the language id: each singleton once, each with its subtags. */
const readExtensions = (cursor: Cursor): boolean => {
  // Made on the first extension only: most tags have none.
  let seen: Set<string> | undefined
  while (cursor.next < cursor.subtags.length) {
    const singleton = (cursor.subtags[cursor.next] ?? "").toLowerCase()
    cursor.next++
    if (!isSubtag(singleton, 1, 1, true) || seen?.has(singleton) === true) return false
    seen ??= new Set()
    seen.add(singleton)
    const read =
      singleton === "u"
        ? readUnicodeExtension(cursor)
        : singleton === "t"
          ? readTransformedExtension(cursor)
          : readWhile(cursor, (subtag) => isSubtag(subtag, singleton === "x" ? 1 : 2, 8, true)) > 0
    if (!read) return false
  }
  return true
}

/** Whether `tag` is a language tag by the grammar above. Linear in its length (at most 35 characters get here). */
export const isWellFormedLanguageTag = (tag: string): boolean => {
  const cursor: Cursor = { subtags: tag.split("-"), next: 0 }
  return readLanguageId(cursor) && readExtensions(cursor)
}

/**
 * A language tag as sent (docs/api.md, "Precise rules"): 1 to 35 characters, well-formed BCP 47 by ECMA-402's
 * grammar. Decoded as sent: the domain stores its canonical form (`EN-us` -> `en-US`, `iw` -> `he`).
 */
export const LanguageTagInput = Schema.String.check(
  Schema.isMinLength(1, issue("too_short", "must not be empty")).abort(),
  Schema.isMaxLength(MAX_LENGTH, issue("too_long", `must be at most ${MAX_LENGTH} characters`)).abort(),
  Schema.makeFilter<string>(isWellFormedLanguageTag, {
    ...issue("invalid_format", "must be a BCP 47 language tag such as en-US"),
    toJsonSchema: () => ({})
  }).abort()
).annotate({ identifier: "LanguageTag", examples: ["en", "en-US", "pt-BR"] })
