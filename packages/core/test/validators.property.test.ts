import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Schema } from "effect"
import fc from "fast-check"
import { getCanonicalLocales } from "@formatjs/intl-getcanonicallocales"
import { readFileSync } from "node:fs"
import {
  applyPatch,
  decoderFor,
  defaultPreferenceValues,
  emailKey,
  FIELD_ISSUE_CODES,
  type FieldIssueCode,
  type Preferences,
  ValidationError
} from "@accord/domain"
import { decodePreferencesPatch, PlanEntryBody, PreferencesPatchBody, SetDefaultBody } from "@accord/contract"

const decodePreferences = decoderFor(PreferencesPatchBody)
const decodePlanEntry = decoderFor(PlanEntryBody)
const decodeSetDefault = decoderFor(SetDefaultBody)

type Decoder<A> = (input: unknown) => Effect.Effect<A, ValidationError>

const decodeSync = <A>(decode: Decoder<A>, input: unknown) => Effect.runSync(Effect.result(decode(input)))

/** The `[pointer, code]` pairs of a failed decode, or "ok" when it succeeded. */
const outcomeOf = <A>(decode: Decoder<A>, input: unknown) =>
  Result.match(decodeSync(decode, input), {
    onFailure: (error) => error.issues.map((found) => [found.pointer, found.code]),
    onSuccess: () => "ok" as const
  })

const chars = (text: string) => fc.constantFrom(...text.split(""))
const LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
const DIGITS = "0123456789"
const ATEXT = LETTERS + DIGITS + "!#$%&'*+/=?^_`{|}~-"
const ASCII_WHITESPACE = " \t\n\f\r"

describe("timezone", () => {
  it("every multiple of 15 in -720..840 decodes to itself", () => {
    fc.assert(
      fc.property(fc.integer({ min: -48, max: 56 }), (steps) => {
        const timezone = steps * 15
        const decoded = decodeSync(decodePreferences, { timezone })
        expect(Result.isSuccess(decoded) && decoded.success.timezone).toBe(timezone)
      })
    )
  })

  it("every other integer in range is invalid_format", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -720, max: 840 }).filter((minutes) => minutes % 15 !== 0),
        (timezone) => {
          expect(outcomeOf(decodePreferences, { timezone })).toEqual([["/timezone", "invalid_format"]])
        }
      ),
      { numRuns: 300 }
    )
  })

  it("every integer outside -720..840 is out_of_range, multiple of 15 or not", () => {
    const outside = fc.oneof(
      fc.integer({ min: 841, max: Number.MAX_SAFE_INTEGER }),
      fc.integer({ min: Number.MIN_SAFE_INTEGER, max: -721 }),
      fc.integer({ min: 57, max: 1_000_000 }).map((steps) => steps * 15),
      fc.integer({ min: 49, max: 1_000_000 }).map((steps) => steps * -15)
    )
    fc.assert(
      fc.property(outside, (timezone) => {
        expect(outcomeOf(decodePreferences, { timezone })).toEqual([["/timezone", "out_of_range"]])
      }),
      { numRuns: 300 }
    )
  })

  it("every non-integer number (fractions, infinities, NaN) is invalid_type", () => {
    fc.assert(
      fc.property(fc.double({ noInteger: true }), (timezone) => {
        expect(outcomeOf(decodePreferences, { timezone })).toEqual([["/timezone", "invalid_type"]])
      }),
      { numRuns: 300 }
    )
  })

  it("every non-number JSON value is invalid_type", () => {
    fc.assert(
      fc.property(
        fc.jsonValue().filter((value) => typeof value !== "number"),
        (timezone) => {
          expect(outcomeOf(decodePreferences, { timezone })).toEqual([["/timezone", "invalid_type"]])
        }
      )
    )
  })
})

describe("email", () => {
  const atom = fc.string({ unit: chars(ATEXT), minLength: 1, maxLength: 12 })
  const local = fc
    .array(atom, { minLength: 1, maxLength: 4 })
    .map((atoms) => atoms.join("."))
    .filter((part) => part.length <= 64)
  const alnum = chars(LETTERS + DIGITS)
  const label = fc.oneof(
    alnum,
    fc
      .tuple(alnum, fc.string({ unit: chars(LETTERS + DIGITS + "-"), maxLength: 20 }), alnum)
      .map(([first, middle, last]) => first + middle + last)
  )
  const lastLabel = label.filter((candidate) => /[A-Za-z]/.test(candidate))
  const domain = fc
    .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), lastLabel)
    .map(([labels, last]) => [...labels, last].join("."))
  const whitespace = fc.string({ unit: chars(ASCII_WHITESPACE), maxLength: 3 })

  it("any valid address decodes trimmed, with the domain lower-cased and the local part kept", () => {
    fc.assert(
      fc.property(whitespace, local, domain, whitespace, (before, localPart, domainPart, after) => {
        const decoded = decodeSync(decodePlanEntry, {
          email: `${before}${localPart}@${domainPart}${after}`,
          password: "12345678"
        })
        const expected = `${localPart}@${domainPart.toLowerCase()}`
        expect(Result.isSuccess(decoded) && decoded.success.email).toBe(expected)
        if (Result.isSuccess(decoded)) expect(emailKey(decoded.success.email)).toBe(expected.toLowerCase())
      }),
      { numRuns: 500 }
    )
  })

  it("a doubled dot, a missing @ or an all-digit last label is invalid_format", () => {
    const broken = fc.oneof(
      fc.tuple(local, domain).map(([localPart, domainPart]) => `${localPart}..x@${domainPart}`),
      fc.tuple(local, domain).map(([localPart, domainPart]) => `${localPart}${domainPart}`),
      fc
        .tuple(local, domain, fc.integer({ min: 0, max: 999 }))
        .map(([localPart, domainPart, tld]) => `${localPart}@${domainPart}.${tld}`)
    )
    fc.assert(
      fc.property(broken, (email) => {
        expect(outcomeOf(decodePlanEntry, { email, password: "12345678" })).toEqual([["/email", "invalid_format"]])
      }),
      { numRuns: 300 }
    )
  })
})

describe("language", () => {
  // The stored form: the body as decoded, merged by the domain into a record (its canonical tag: what a PUT stores
  // and answers).
  const fresh: Preferences = { id: 1, ...defaultPreferenceValues, createdAt: new Date(0), updatedAt: new Date(0) }
  const decodeStored = (input: unknown) =>
    Effect.map(decodePreferencesPatch(input), (patch) => ({
      language: patch.language === undefined ? undefined : applyPatch(fresh, patch, new Date(1)).language
    }))

  const letters = (minLength: number, maxLength: number) => fc.string({ unit: chars(LETTERS), minLength, maxLength })
  const subtag = fc.oneof(
    letters(1, 8),
    fc.string({ unit: chars(LETTERS + DIGITS), minLength: 1, maxLength: 8 }),
    fc.string({ unit: chars(DIGITS), minLength: 1, maxLength: 3 })
  )
  const separator = fc.constantFrom("-", "-", "-", "_", "")
  const tag = fc
    .tuple(letters(1, 9), fc.array(fc.tuple(separator, subtag), { maxLength: 6 }))
    .map(([language, rest]) => language + rest.map(([sep, sub]) => sep + sub).join(""))

  const canonical = (candidate: string): string | undefined => {
    try {
      const found = getCanonicalLocales(candidate)[0]
      return found === "root" || found?.startsWith("root-") === true ? undefined : found
    } catch {
      return undefined
    }
  }

  /** The table every runtime's suite runs too: the same stored form on Node, Bun, Deno and workerd. */
  const languageTags: { readonly cases: ReadonlyArray<{ readonly sent: string; readonly stored: string | null }> } =
    JSON.parse(readFileSync(new URL("./fixtures/language-tags.json", import.meta.url), "utf8"))

  it("stores the table's form for each tag, whatever the engine's own locale data says", () => {
    for (const { sent, stored } of languageTags.cases) {
      const outcome = decodeSync(decodeStored, { language: sent })
      if (stored === null) expect(Result.isFailure(outcome), sent).toBe(true)
      else expect(Result.isSuccess(outcome) && outcome.success.language, sent).toBe(stored)
    }
  })

  it("agrees with the CLDR alias data on generated tags (35 characters as sent at most)", () => {
    fc.assert(
      fc.property(fc.oneof(tag, fc.string({ maxLength: 40 })), (language) => {
        const expected = canonical(language)
        const outcome = decodeSync(decodeStored, { language })
        if (language.length === 0) expect(outcomeOf(decodeStored, { language })).toEqual([["/language", "too_short"]])
        else if (language.length > 35)
          expect(outcomeOf(decodeStored, { language })).toEqual([["/language", "too_long"]])
        else if (expected === undefined)
          expect(outcomeOf(decodeStored, { language })).toEqual([["/language", "invalid_format"]])
        else expect(Result.isSuccess(outcome) && outcome.success.language).toBe(expected)
      }),
      { numRuns: 1000 }
    )
  })

  it("decoding is idempotent: a stored tag decodes to itself", () => {
    fc.assert(
      fc.property(tag, (language) => {
        const first = decodeSync(decodeStored, { language })
        if (Result.isFailure(first) || first.success.language === undefined) return
        const again = decodeSync(decodeStored, { language: first.success.language })
        expect(Result.isSuccess(again) && again.success.language).toBe(first.success.language)
      }),
      { numRuns: 500 }
    )
  })
})

describe("decode never throws", () => {
  const CODES: ReadonlyArray<FieldIssueCode> = FIELD_ISSUE_CODES
  const bodies: ReadonlyArray<readonly [string, Decoder<unknown>, ReadonlyArray<string>]> = [
    ["preferences", decodePreferences, ["id", "language", "timezone", "mfa_enabled", "created_at", "updated_at"]],
    ["plan entry", decodePlanEntry, ["email", "password"]],
    ["set default", decodeSetDefault, ["is_default"]]
  ]

  for (const [name, decode, fields] of bodies) {
    // Objects whose keys are mostly the real fields, so the generated values reach every field rule.
    const objectWithFields = fc.dictionary(fc.oneof(fc.constantFrom(...fields), fc.string()), fc.jsonValue(), {
      maxKeys: 8
    })

    it(`${name}: any JSON value gives a value or a ValidationError with sorted, unique pointers and known codes`, () => {
      fc.assert(
        fc.property(fc.oneof(fc.jsonValue(), objectWithFields), (input) => {
          const outcome = decodeSync(decode, input)
          if (Result.isSuccess(outcome)) return
          const error = outcome.failure
          expect(error).toBeInstanceOf(ValidationError)
          expect(error.issues.length).toBeGreaterThan(0)
          const pointers = error.issues.map((found) => found.pointer)
          expect(pointers).toEqual([...new Set(pointers)].sort())
          for (const found of error.issues) {
            expect(CODES).toContain(found.code)
            expect(found.pointer === "" || found.pointer.startsWith("/")).toBe(true)
            expect(typeof found.detail === "string" && found.detail.length > 0).toBe(true)
          }
        }),
        { numRuns: 1000 }
      )
    })
  }

  it("a JSON value that is not an object is one invalid_type issue for the whole input", () => {
    fc.assert(
      fc.property(
        fc.jsonValue().filter((value) => value === null || typeof value !== "object" || Array.isArray(value)),
        (input) => {
          expect(outcomeOf(decodePreferences, input)).toEqual([["", "invalid_type"]])
        }
      )
    )
  })
})

describe("unknown fields", () => {
  it("are refused next to the known fields' issues, one per field, sorted by pointer", () => {
    expect(outcomeOf(decodePreferences, { zone: 1, timezone: 7, a: null, language: "en" })).toEqual([
      ["/a", "unknown_field"],
      ["/timezone", "invalid_format"],
      ["/zone", "unknown_field"]
    ])
    expect(outcomeOf(decodeSetDefault, { is_default: true, extra: 1 })).toEqual([["/extra", "unknown_field"]])
    expect(
      outcomeOf(decodePlanEntry, { email: "a@example.com", password: "correct horse battery", role: "admin" })
    ).toEqual([["/role", "unknown_field"]])
  })

  it("are refused at any depth of a struct that nests one (Schema's own check)", () => {
    const decodeNested = decoderFor(Schema.Struct({ inner: Schema.Struct({ a: Schema.Number }) }))
    expect(outcomeOf(decodeNested, { inner: { a: 1, b: 2 } })).toEqual([["/inner/b", "unknown_field"]])
    expect(outcomeOf(decodeNested, { inner: { a: 1 }, c: 3 })).toEqual([["/c", "unknown_field"]])
    expect(outcomeOf(decodeNested, { inner: { a: 1 } })).toBe("ok")
  })
})

describe("unknown fields inside a field parsed from text", () => {
  it("are refused too (a transformation's decoded side is a struct)", () => {
    const decodeParsed = decoderFor(Schema.Struct({ meta: Schema.fromJsonString(Schema.Struct({ a: Schema.Number })) }))
    expect(outcomeOf(decodeParsed, { meta: '{"a":1,"b":2}' })).toEqual([["/meta/b", "unknown_field"]])
    expect(outcomeOf(decodeParsed, { meta: '{"a":1}' })).toBe("ok")
  })
})
