import { PaymentMethodId, PaymentMethods, PreferencesStore, Seed, StoreAdmin, UserId } from "@accord/domain"
import { PgliteStoreLive } from "@accord/store-postgres"
import { Effect, Schema } from "effect"

const program = Effect.gen(function* () {
  const admin = yield* StoreAdmin
  const methods = yield* PaymentMethods
  const preferences = yield* PreferencesStore
  const userId = UserId.make("u_1")

  // Seeds insert what is missing and never change a row that exists.
  yield* admin.loadSeed(
    Schema.decodeUnknownSync(Seed)({
      users: [{ id: "u_1", token: "dev-token-u1" }],
      payment_methods: [
        { id: "pm_card", user_id: "u_1", is_default: true },
        { id: "pm_bank", user_id: "u_1" }
      ]
    })
  )

  // One default per user, kept by the database itself (a partial unique index) under any concurrency. The last
  // argument is the events the change records (the use cases pass the domain's; none here).
  yield* methods.setDefault(userId, PaymentMethodId.make("pm_bank"), new Date("2030-01-01T10:00:00.123Z"), () => [])
  for (const method of yield* methods.listByUser(userId)) {
    console.log(method.id, method.isDefault, method.updatedAt.toISOString())
  }

  const record = yield* preferences.getOrCreate(userId, new Date("2030-01-01T10:00:00.000Z"))
  console.log(record.language, record.timezone, record.mfaEnabled)
})

// PGlite: PostgreSQL compiled to WebAssembly, in this process and in memory. Swap in
// PostgresStoreLive({ connectionString: process.env.DATABASE_URL! }) for a server: same ports, same behaviour.
await Effect.runPromise(Effect.provide(program, PgliteStoreLive()))
// pm_bank true 2030-01-01T10:00:00.123Z
// pm_card false 2030-01-01T10:00:00.123Z
// en 0 false
