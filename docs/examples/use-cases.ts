import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { PaymentMethodId, Seed, setDefaultPaymentMethod, updateLanguagePreferences, UserId } from "@accord/domain"
import { decodePreferencesPatch } from "@accord/contract"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"

// Built once for the life of the process: a store (PostgresStoreLive in production) and the password hasher.
const seed = Schema.decodeUnknownSync(Seed)({
  payment_methods: [
    { id: "pm_card", user_id: "u_1", is_default: true },
    { id: "pm_bank", user_id: "u_1" }
  ]
})
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive()))

// Host code, no HTTP: e.g. a job run after a user's onboarding. The user id comes from the host's own session.
// The use cases take checked values: ids through their Schemas' `make`, outside input through a decoder, which
// checks and normalises it ("de-at" -> "de-AT") or fails with the ValidationError an HTTP client would get.
const userId = UserId.make("u_1")
const onboard = Effect.gen(function* () {
  const method = yield* setDefaultPaymentMethod(userId, PaymentMethodId.make("pm_bank"))
  const patch = yield* decodePreferencesPatch({ language: "de-at", timezone: 60 })
  const preferences = yield* updateLanguagePreferences(userId, patch)
  return { defaultMethod: method.id, language: preferences.language, timezone: preferences.timezone }
})
console.log(await runtime.runPromise(onboard))

// Failures are typed values (ValidationError, NotFound, Unavailable): handle the ones you expect by their tag.
const outcome = await runtime.runPromise(
  decodePreferencesPatch({ timezone: 7 }).pipe(
    Effect.flatMap((patch) => updateLanguagePreferences(userId, patch)),
    Effect.as("saved"),
    Effect.catchTag("ValidationError", (error) =>
      Effect.succeed(error.issues.map((issue) => `${issue.pointer}: ${issue.code}`).join(", "))
    )
  )
)
console.log(outcome)

await runtime.dispose()
// { defaultMethod: 'pm_bank', language: 'de-AT', timezone: 60 }
// /timezone: invalid_format
