import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { getLanguagePreferences } from "@accord/domain"
import { toPreferencesView } from "@accord/contract"
import { alice, bob, issuesOf, TestServices, type Issue, fromWire } from "./support.js"

const update = (body: unknown) => fromWire.updateLanguagePreferences(alice, body).pipe(Effect.provide(TestServices))
const viewAfterUpdate = (body: unknown) => Effect.map(update(body), toPreferencesView)

/** TestClock starts at the epoch; a minute later is a visibly different instant. */
const EPOCH = "1970-01-01T00:00:00.000Z"
const ONE_MINUTE_LATER = "1970-01-01T00:01:00.000Z"

describe("updateLanguagePreferences: language", () => {
  it.effect.each([
    ["en", "en"],
    ["EN-us", "en-US"],
    ["iw", "he"],
    ["zh-hant-tw", "zh-Hant-TW"],
    ["pt-BR", "pt-BR"],
    ["sr-latn", "sr-Latn"],
    // 35 characters as sent: the longest accepted.
    ["de-DE-u-co-phonebk-ka-shifted-kn-tr", "de-DE-u-co-phonebk-ka-shifted-kn-tr"]
  ])("accepts %j and stores %j", ([sent, stored]) =>
    Effect.gen(function* () {
      expect((yield* viewAfterUpdate({ language: sent })).language).toBe(stored)
    })
  )

  const cases: ReadonlyArray<readonly [label: string, language: unknown, issue: Issue]> = [
    ["null", null, ["/language", "invalid_type"]],
    ["a number", 1, ["/language", "invalid_type"]],
    ["an array", ["en"], ["/language", "invalid_type"]],
    ["empty", "", ["/language", "too_short"]],
    // 36 characters: too long even though Intl would accept it.
    ["36 characters", "de-DE-u-co-phonebk-ka-shifted-kn-tr-", ["/language", "too_long"]],
    ["36 characters of a valid tag", "en-US-u-ca-gregory-nu-latn-hc-h23-ab", ["/language", "too_long"]],
    ["an underscore", "en_US", ["/language", "invalid_format"]],
    ["a one-letter language", "e", ["/language", "invalid_format"]],
    ["surrounding spaces", " en ", ["/language", "invalid_format"]],
    ["a trailing dash", "en-", ["/language", "invalid_format"]],
    ["a non-ASCII tag", "énglish", ["/language", "invalid_format"]]
  ]
  it.effect.each(cases)("rejects %s", ([, language, expected]) =>
    Effect.gen(function* () {
      expect(yield* issuesOf(update({ language }))).toEqual([expected])
    })
  )
})

describe("updateLanguagePreferences: timezone", () => {
  it.effect.each([-720, -705, -15, 0, 15, 330, 345, 600, 825, 840, 60.0])("accepts %d", (timezone) =>
    Effect.gen(function* () {
      expect((yield* viewAfterUpdate({ timezone })).timezone).toBe(timezone)
    })
  )

  const cases: ReadonlyArray<readonly [label: string, timezone: unknown, issue: Issue]> = [
    ["null", null, ["/timezone", "invalid_type"]],
    ["a numeric string", "60", ["/timezone", "invalid_type"]],
    ["a boolean", true, ["/timezone", "invalid_type"]],
    ["30.5", 30.5, ["/timezone", "invalid_type"]],
    ["1e400 (Infinity once parsed)", Number.POSITIVE_INFINITY, ["/timezone", "invalid_type"]],
    ["-1e400", Number.NEGATIVE_INFINITY, ["/timezone", "invalid_type"]],
    ["NaN", Number.NaN, ["/timezone", "invalid_type"]],
    ["a fraction out of range (type comes first)", 900.5, ["/timezone", "invalid_type"]],
    ["-735", -735, ["/timezone", "out_of_range"]],
    ["855", 855, ["/timezone", "out_of_range"]],
    ["a non-multiple out of range (range comes first)", 841, ["/timezone", "out_of_range"]],
    ["-721", -721, ["/timezone", "out_of_range"]],
    ["7", 7, ["/timezone", "invalid_format"]],
    ["-1", -1, ["/timezone", "invalid_format"]],
    ["839", 839, ["/timezone", "invalid_format"]]
  ]
  it.effect.each(cases)("rejects %s", ([, timezone, expected]) =>
    Effect.gen(function* () {
      expect(yield* issuesOf(update({ timezone }))).toEqual([expected])
    })
  )
})

describe("updateLanguagePreferences: mfa_enabled", () => {
  it.effect.each([true, false])("accepts %j", (mfa_enabled) =>
    Effect.gen(function* () {
      expect((yield* viewAfterUpdate({ mfa_enabled })).mfa_enabled).toBe(mfa_enabled)
    })
  )

  it.effect.each(["true", "false", 1, 0, null, [], {}])(
    "rejects %j as invalid_type (JSON booleans only)",
    (mfa_enabled) =>
      Effect.gen(function* () {
        expect(yield* issuesOf(update({ mfa_enabled }))).toEqual([["/mfa_enabled", "invalid_type"]])
      })
  )
})

describe("updateLanguagePreferences: body", () => {
  it.effect("one entry per field, sorted by pointer, unknown fields included", () =>
    Effect.gen(function* () {
      expect(
        yield* issuesOf(update({ zzz: 1, timezone: 7, mfa_enabled: "true", language: "en_US", aaa: null }))
      ).toEqual([
        ["/aaa", "unknown_field"],
        ["/language", "invalid_format"],
        ["/mfa_enabled", "invalid_type"],
        ["/timezone", "invalid_format"],
        ["/zzz", "unknown_field"]
      ])
    })
  )

  it.effect("pointers escape '/' and '~' in unknown field names (RFC 6901)", () =>
    Effect.gen(function* () {
      expect(yield* issuesOf(update({ "a/b": 1, "c~d": 2 }))).toEqual([
        ["/a~1b", "unknown_field"],
        ["/c~0d", "unknown_field"]
      ])
    })
  )

  it.effect("an invalid field stores nothing, not even the valid ones beside it", () =>
    Effect.gen(function* () {
      yield* Effect.flip(fromWire.updateLanguagePreferences(alice, { language: "fr", timezone: 7 }))
      yield* Effect.flip(fromWire.updateLanguagePreferences(alice, { language: "fr", unknown: true }))
      const current = yield* getLanguagePreferences(alice)
      expect(current.language).toBe("en")
      expect(current.timezone).toBe(0)
    }).pipe(Effect.provide(TestServices))
  )

  it.effect.each([
    { id: "x" },
    { id: 999 },
    { id: null, created_at: "garbage", updated_at: { nested: [1, 2] } },
    { created_at: "2000-01-01T00:00:00.000Z", updated_at: "2000-01-01T00:00:00.000Z" }
  ])("read-only fields are ignored whatever their value: %j", (body) =>
    Effect.gen(function* () {
      const before = toPreferencesView(yield* getLanguagePreferences(alice))
      yield* TestClock.adjust("1 minute")
      const after = toPreferencesView(yield* fromWire.updateLanguagePreferences(alice, body))
      expect(after).toEqual(before)
    }).pipe(Effect.provide(TestServices))
  )
})

describe("updateLanguagePreferences: records and timestamps", () => {
  it.effect("the first access creates the defaults with created_at = updated_at", () =>
    Effect.gen(function* () {
      expect(toPreferencesView(yield* getLanguagePreferences(alice))).toEqual({
        id: 1,
        language: "en",
        timezone: 0,
        mfa_enabled: false,
        created_at: EPOCH,
        updated_at: EPOCH
      })
    }).pipe(Effect.provide(TestServices))
  )

  it.effect("a creating update that sets values still has created_at = updated_at", () =>
    Effect.gen(function* () {
      yield* TestClock.adjust("1 minute")
      expect(
        toPreferencesView(yield* fromWire.updateLanguagePreferences(alice, { language: "fr", mfa_enabled: true }))
      ).toEqual({
        id: 1,
        language: "fr",
        timezone: 0,
        mfa_enabled: true,
        created_at: ONE_MINUTE_LATER,
        updated_at: ONE_MINUTE_LATER
      })
    }).pipe(Effect.provide(TestServices))
  )

  it.effect("{} is a no-op that returns (and on first access creates) the record", () =>
    Effect.gen(function* () {
      const created = yield* fromWire.updateLanguagePreferences(alice, {})
      yield* TestClock.adjust("1 minute")
      expect(yield* fromWire.updateLanguagePreferences(alice, {})).toEqual(created)
      expect(toPreferencesView(created)).toMatchObject({ language: "en", created_at: EPOCH, updated_at: EPOCH })
    }).pipe(Effect.provide(TestServices))
  )

  it.effect("merge: each present field is set, each absent field keeps its value", () =>
    Effect.gen(function* () {
      yield* fromWire.updateLanguagePreferences(alice, { language: "fr" })
      yield* fromWire.updateLanguagePreferences(alice, { timezone: 60 })
      yield* fromWire.updateLanguagePreferences(alice, { mfa_enabled: true })
      const view = toPreferencesView(yield* fromWire.updateLanguagePreferences(alice, { language: "de" }))
      expect(view).toMatchObject({ language: "de", timezone: 60, mfa_enabled: true })
    }).pipe(Effect.provide(TestServices))
  )

  it.effect("updated_at moves only on a real change; id and created_at never change", () =>
    Effect.gen(function* () {
      const created = toPreferencesView(
        yield* fromWire.updateLanguagePreferences(alice, { language: "en-US", timezone: 60 })
      )
      yield* TestClock.adjust("1 minute")
      // Same values (one spelled differently but canonically equal): nothing changes.
      const same = toPreferencesView(
        yield* fromWire.updateLanguagePreferences(alice, { language: "EN-us", timezone: 60.0 })
      )
      expect(same).toEqual(created)
      const sameAgain = toPreferencesView(yield* fromWire.updateLanguagePreferences(alice, { mfa_enabled: false }))
      expect(sameAgain).toEqual(created)
      const changed = toPreferencesView(yield* fromWire.updateLanguagePreferences(alice, { mfa_enabled: true }))
      expect(changed).toEqual({ ...created, mfa_enabled: true, updated_at: ONE_MINUTE_LATER })
      yield* TestClock.adjust("1 minute")
      const read = toPreferencesView(yield* getLanguagePreferences(alice))
      expect(read).toEqual(changed)
    }).pipe(Effect.provide(TestServices))
  )

  it.effect("each user has one record; ids are store-wide and increasing", () =>
    Effect.gen(function* () {
      const first = yield* fromWire.updateLanguagePreferences(alice, { language: "fr" })
      const second = yield* getLanguagePreferences(bob)
      expect([first.id, second.id]).toEqual([1, 2])
      expect(second.language).toBe("en")
      expect((yield* getLanguagePreferences(alice)).id).toBe(1)
    }).pipe(Effect.provide(TestServices))
  )

  it.effect("concurrent updates to different fields are all kept", () =>
    Effect.gen(function* () {
      yield* Effect.all(
        [
          fromWire.updateLanguagePreferences(alice, { language: "ja" }),
          fromWire.updateLanguagePreferences(alice, { timezone: 540 }),
          fromWire.updateLanguagePreferences(alice, { mfa_enabled: true })
        ],
        { concurrency: "unbounded" }
      )
      expect(toPreferencesView(yield* getLanguagePreferences(alice))).toMatchObject({
        language: "ja",
        timezone: 540,
        mfa_enabled: true
      })
    }).pipe(Effect.provide(TestServices))
  )
})
