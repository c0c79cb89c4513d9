import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted, Schema } from "effect"
import {
  createPublicPlanEntry,
  Email,
  LanguageTag,
  PaymentMethodId,
  setDefaultPaymentMethod,
  TimezoneOffset,
  updateLanguagePreferences
} from "@accord/domain"
import { toPreferencesView } from "@accord/contract"
import { alice, seed, TestServices } from "./support.js"

// The use cases take checked values (docs/api.md: decoding happens at the edge). Values from outside enter through
// the Schemas: their decoders (which normalise) or `make` (which checks an already-canonical value).
const email = Schema.decodeUnknownSync(Email)(" Ada@Example.COM ")
const language = Schema.decodeUnknownSync(LanguageTag)("EN-us")

describe("use cases called with typed values, no HTTP", () => {
  it.effect("updateLanguagePreferences merges a typed patch", () =>
    Effect.gen(function* () {
      const updated = yield* updateLanguagePreferences(alice, { language, timezone: TimezoneOffset.make(60) })
      expect(toPreferencesView(updated)).toMatchObject({ language: "en-US", timezone: 60, mfa_enabled: false })
    }).pipe(Effect.provide(TestServices))
  )

  it.effect("createPublicPlanEntry stores a typed entry", () =>
    Effect.gen(function* () {
      expect(yield* createPublicPlanEntry({ email, password: Redacted.make("correct horse battery") })).toEqual({
        email: "Ada@example.com"
      })
    }).pipe(Effect.provide(TestServices))
  )

  it.effect("setDefaultPaymentMethod takes a checked id", () =>
    Effect.gen(function* () {
      yield* seed({ payment_methods: [{ id: "pm_1", user_id: alice }] })
      expect((yield* setDefaultPaymentMethod(alice, PaymentMethodId.make("pm_1"))).isDefault).toBe(true)
    }).pipe(Effect.provide(TestServices))
  )

  it("a wrong input does not compile (checked by npm run typecheck)", () => {
    const typeChecks = () => [
      // @ts-expect-error a wire body is not a patch: `mfa_enabled` is not a field, and `language` must be a LanguageTag
      updateLanguagePreferences(alice, { language: "EN-us", mfa_enabled: true }),
      // @ts-expect-error a plain string is not a TimezoneOffset
      updateLanguagePreferences(alice, { timezone: 60 }),
      // @ts-expect-error the password must already be Redacted, the email an Email
      createPublicPlanEntry({ email: "ada@example.com", password: "correct horse battery" }),
      // @ts-expect-error a plain string is not a PaymentMethodId
      setDefaultPaymentMethod(alice, "pm_1")
    ]
    expect(typeof typeChecks).toBe("function")
  })
})
