import { isWellFormedLanguageTag } from "@accord/domain"
import { describe, expect, it } from "@effect/vitest"
import { getCanonicalLocales } from "@formatjs/intl-getcanonicallocales"
import fc from "fast-check"

// The contract checks a language tag with a grammar of its own (data-free, so a client bundles no CLDR data); the
// domain stores the form @formatjs/intl-getcanonicallocales gives. The two must accept the same tags (docs/api.md,
// "Precise rules"): what the grammar accepts, the library canonicalises; what it refuses, the library refuses.

const libraryAccepts = (tag: string): boolean => {
  try {
    const canonical = getCanonicalLocales(tag)[0]
    return canonical !== undefined && canonical !== "root" && !canonical.startsWith("root-")
  } catch {
    return false
  }
}

const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
const alnum = (minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...(LETTERS + "0123456789").split("")), minLength, maxLength })
/** Subtags of every kind the grammar tells apart, singletons and extension keys included. */
const subtag = fc.oneof(
  alnum(1, 9),
  fc.constantFrom("u", "t", "x", "a", "U", "ca", "co", "h0", "m0", "latn", "gregory", "Hant", "US", "419", "1996"),
  fc.constantFrom("fonipa", "FONIPA", "toString", "valueOf", "root", "")
)
const tag = fc
  .tuple(
    fc.oneof(alnum(1, 9), fc.constantFrom("en", "de", "und", "root", "x", "i")),
    fc.array(subtag, { maxLength: 8 })
  )
  .map(([language, rest]) => [language, ...rest].join("-"))

describe("the contract's language tag grammar (isWellFormedLanguageTag)", () => {
  it("accepts exactly the tags the library canonicalises, on generated tags", () => {
    fc.assert(
      fc.property(fc.oneof(tag, fc.string({ maxLength: 24 })), (candidate) => {
        expect(isWellFormedLanguageTag(candidate), candidate).toBe(libraryAccepts(candidate))
      }),
      { numRuns: 20_000 }
    )
  })

  it.each([
    ["en-US", true],
    ["zh-Hant-TW-u-ca-chinese-x-private", true],
    ["de-DE-1996-t-en-h0-hybrid", true],
    ["en-fonipa-FONIPA", true],
    ["en_US", false],
    ["root", false],
    ["root-u-ca-gregory", false],
    ["en-1996-1996", false],
    ["en-u-ca-u-co", false],
    ["en-a-bb-a-cc", false],
    ["en-t", false],
    ["en-x", false],
    // The library's parser keeps variants in a plain object, so these count as seen already.
    ["en-toString", false],
    ["en-valueOf", false]
  ])("%s: %s, as the library says", (candidate, accepted) => {
    expect(isWellFormedLanguageTag(candidate)).toBe(accepted)
    expect(libraryAccepts(candidate)).toBe(accepted)
  })
})
