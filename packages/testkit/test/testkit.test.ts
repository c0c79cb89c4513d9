import { afterEach, describe, expect, it } from "@effect/vitest"
import {
  Authenticator,
  createPublicPlanEntry,
  getLanguagePreferences,
  isWellFormedToken,
  listPaymentMethods,
  PaymentMethodId,
  PlanEntries,
  Principal,
  setDefaultPaymentMethod,
  updateLanguagePreferences,
  UserId
} from "@accord/domain"
import { decodePreferencesPatch, PlanEntryBody } from "@accord/contract"
import { Effect, Schema } from "effect"
import { makeAccordTestKit, type AccordTestKit } from "@accord/testkit"

const kits: Array<AccordTestKit> = []
const kit = async (...args: Parameters<typeof makeAccordTestKit>) => {
  const made = await makeAccordTestKit(...args)
  kits.push(made)
  return made
}

afterEach(async () => {
  await Promise.all(kits.splice(0).map((made) => made.dispose()))
})

/** Wire values enter through the Schemas, as the HTTP pipeline decodes them. */
const updateFromWire = (userId: UserId, body: unknown) =>
  Effect.flatMap(decodePreferencesPatch(body), (patch) => updateLanguagePreferences(userId, patch))
const planEntry = Schema.decodeUnknownSync(PlanEntryBody)

const authenticate = (made: AccordTestKit, token: string) =>
  made.runtime.runPromise(Effect.result(Effect.flatMap(Authenticator, (auth) => auth.authenticate(token))))

describe("makeAccordTestKit", () => {
  it("seeds a user and a client whose tokens authenticate through the Authenticator port", async () => {
    const made = await kit()
    expect(made.user.id).toBe("u_1")
    expect(made.client.id).toBe("web")
    expect(isWellFormedToken(made.user.token)).toBe(true)
    expect(isWellFormedToken(made.client.token)).toBe(true)
    const user = await authenticate(made, made.user.token)
    expect(user._tag === "Success" && user.success).toStrictEqual(Principal.User({ userId: made.user.id }))
    const client = await authenticate(made, made.client.token)
    expect(client._tag === "Success" && client.success).toStrictEqual(Principal.Client({ clientId: made.client.id }))
    const unknown = await authenticate(made, "not-a-seeded-token")
    expect(unknown._tag === "Failure" && unknown.failure).toMatchObject({
      _tag: "Unauthenticated",
      reason: "invalid_token"
    })
  })

  it("records the events of the use cases it runs, which a host's test asserts without HTTP", async () => {
    const made = await kit()
    expect(await made.events()).toEqual([])
    await made.runtime.runPromise(updateFromWire(made.user.id, { timezone: 60 }))
    await made.runtime.runPromise(updateFromWire(made.user.id, { timezone: 60 }))
    await made.runtime.runPromise(setDefaultPaymentMethod(made.user.id, PaymentMethodId.make("pm_2")))
    const events = await made.events()
    expect(events.map((event) => [event.type, event.subject, event.sequence, event.data])).toEqual([
      ["preferences.updated", "users/u_1", 1, { changes: { timezone: { old: 0, new: 60 } } }],
      ["payment_method.default_changed", "users/u_1", 2, { payment_method_id: "pm_2", previous_default_id: null }]
    ])
  })

  it("runs the preferences use cases through the returned runtime", async () => {
    const made = await kit()
    const updated = await made.runtime.runPromise(
      updateFromWire(made.user.id, { language: "EN-us", timezone: 60, mfa_enabled: true })
    )
    expect(updated).toMatchObject({ language: "en-US", timezone: 60, mfaEnabled: true })
    expect(await made.runtime.runPromise(getLanguagePreferences(made.user.id))).toStrictEqual(updated)
    const invalid = await made.runtime.runPromise(Effect.result(updateFromWire(made.user.id, { language: "en_US" })))
    expect(invalid._tag === "Failure" && invalid.failure._tag).toBe("ValidationError")
  })

  it("seeds the user's payment methods, none default, and set-default works on them", async () => {
    const made = await kit()
    expect(made.paymentMethods.map((method) => [method.id, method.userId, method.isDefault])).toStrictEqual([
      ["pm_1", "u_1", false],
      ["pm_2", "u_1", false]
    ])
    const chosen = await made.runtime.runPromise(setDefaultPaymentMethod(made.user.id, PaymentMethodId.make("pm_2")))
    expect(chosen.isDefault).toBe(true)
    const listed = await made.runtime.runPromise(listPaymentMethods(made.user.id))
    expect(listed.map((method) => method.isDefault)).toStrictEqual([false, true])
    const foreign = await made.runtime.runPromise(
      Effect.result(setDefaultPaymentMethod(UserId.make("someone-else"), PaymentMethodId.make("pm_1")))
    )
    expect(foreign._tag === "Failure" && foreign.failure._tag).toBe("NotFound")
  })

  it("creates public plan entries with the cheap test scrypt cost", async () => {
    const made = await kit()
    const created = await made.runtime.runPromise(
      createPublicPlanEntry(planEntry({ email: "Ada@Example.COM", password: "correct horse" }))
    )
    expect(created).toStrictEqual({ email: "Ada@example.com" })
    const stored = await made.runtime.runPromise(
      Effect.flatMap(PlanEntries, (entries) => entries.findByEmailKey("ada@example.com"))
    )
    expect(stored?.passwordHash).toMatch(/^scrypt\$1024\$8\$1\$/)
  })

  it("takes ids, payment methods and a scrypt cost as options", async () => {
    const made = await kit({
      userId: "alice",
      clientId: "mobile",
      paymentMethods: [{ id: "card_b" }, { id: "card_a", isDefault: true }],
      scrypt: { N: 2 ** 11, r: 8, p: 1 }
    })
    expect([made.user.id, made.client.id]).toStrictEqual(["alice", "mobile"])
    expect(made.paymentMethods.map((method) => [method.id, method.isDefault])).toStrictEqual([
      ["card_a", true],
      ["card_b", false]
    ])
    await made.runtime.runPromise(
      createPublicPlanEntry(planEntry({ email: "bob@example.com", password: "password123" }))
    )
    const stored = await made.runtime.runPromise(
      Effect.flatMap(PlanEntries, (entries) => entries.findByEmailKey("bob@example.com"))
    )
    expect(stored?.passwordHash).toMatch(/^scrypt\$2048\$/)
  })

  it("each kit has its own store and its own tokens", async () => {
    const first = await kit()
    const second = await kit()
    expect(first.user.token).not.toBe(second.user.token)
    expect((await authenticate(second, first.user.token))._tag).toBe("Failure")
    await first.runtime.runPromise(updateFromWire(first.user.id, { language: "fr" }))
    expect((await second.runtime.runPromise(getLanguagePreferences(second.user.id))).language).toBe("en")
  })

  it("rejects options that break the seed rules, with a readable message", async () => {
    await expect(makeAccordTestKit({ userId: "" })).rejects.toThrow(/invalid options/)
    await expect(makeAccordTestKit({ paymentMethods: [{ id: "has space" }] })).rejects.toThrow(/invalid options/)
    await expect(
      makeAccordTestKit({
        paymentMethods: [
          { id: "a", isDefault: true },
          { id: "b", isDefault: true }
        ]
      })
    ).rejects.toThrow(/at most one payment method may be the default/)
  })

  it("dispose releases the runtime", async () => {
    const made = await makeAccordTestKit()
    await made.dispose()
    await expect(made.runtime.runPromise(getLanguagePreferences(made.user.id))).rejects.toThrow()
  })
})
