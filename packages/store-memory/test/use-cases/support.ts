import { expect } from "@effect/vitest"
import { Effect, Layer, Option, Schema } from "effect"
import {
  createPublicPlanEntry,
  decoderFor,
  type FieldIssueCode,
  NotFound,
  PaymentMethodId,
  Seed,
  type SeedInput,
  setDefaultPaymentMethod,
  StoreAdmin,
  updateLanguagePreferences,
  UserId,
  ValidationError
} from "@accord/domain"
import { decodePreferencesPatch, PlanEntryBody, SetDefaultBody } from "@accord/contract"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { MemoryStoreLive } from "@accord/store-memory"

/** A fresh memory store and a cheap scrypt hasher: each test that provides it starts from nothing. */
export const TestServices = Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive(testScryptCost))

export const alice = UserId.make("u_alice")
export const bob = UserId.make("u_bob")

export const seed = (input: SeedInput) =>
  Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(Schema.decodeUnknownSync(Seed)(input)))

/** The `[pointer, code]` pairs of a ValidationError, in the order the error lists them. */
export const issuesOf = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(effect), (error) => {
    expect(error).toBeInstanceOf(ValidationError)
    return error instanceof ValidationError ? error.issues.map((found) => [found.pointer, found.code] as const) : []
  })

export type Issue = readonly [pointer: string, code: FieldIssueCode]

const decodePlanEntry = decoderFor(PlanEntryBody)
const decodeSetDefault = decoderFor(SetDefaultBody)
const decodePaymentMethodId = Schema.decodeUnknownOption(PaymentMethodId)

/**
 * The use cases take checked values; these wrappers do by hand what the HTTP pipeline does before calling them
 * (decode the wire body with the operation's Schema; an id outside the charset is NotFound), so the field rules can
 * be tested here with wire bodies and no HTTP.
 */
export const fromWire = {
  createPublicPlanEntry: (body: unknown) => Effect.flatMap(decodePlanEntry(body), createPublicPlanEntry),
  updateLanguagePreferences: (userId: UserId, body: unknown) =>
    Effect.flatMap(decodePreferencesPatch(body), (patch) => updateLanguagePreferences(userId, patch)),
  setDefaultPaymentMethod: (userId: UserId, id: string, body: unknown = {}) =>
    Effect.flatMap(decodeSetDefault(body), () =>
      Option.match(decodePaymentMethodId(id), {
        onNone: () => Effect.fail(new NotFound({ resource: "payment_method" })),
        onSome: (methodId) => setDefaultPaymentMethod(userId, methodId)
      })
    )
}
