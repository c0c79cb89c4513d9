import { Seed, StoreAdmin, type StoreServices } from "@accord/domain"
import type { AccordRuntime } from "@accord/core"
import { ScryptPasswordHasherLive, type ScryptHasherOptions } from "@accord/node/scrypt"
import { JwtAuthenticatorLive } from "@accord/auth-jwt"
import { PgliteStoreLive, PostgresStoreLive } from "@accord/store-postgres"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { CLIENT_SCOPE, JWT_AUDIENCE, JWT_ISSUER, type DemoKeys } from "./tokens.js"

/** Demo data: the payment methods of user `u_1`. No tokens: users are whoever a valid JWT's `sub` names. */
export const demoSeed = Schema.decodeUnknownSync(Seed)({
  payment_methods: [
    { id: "pm_card", user_id: "u_1", is_default: true },
    { id: "pm_bank", user_id: "u_1" }
  ]
})

export interface RuntimeOptions {
  readonly keys: Pick<DemoKeys, "jwks">
  /** A PostgreSQL server (`postgres://...`); absent: PGlite in memory, so the example runs anywhere. */
  readonly databaseUrl?: string | undefined
  /** PostgreSQL schema to work in (created when missing); default the connection's (`public`). */
  readonly databaseSchema?: string | undefined
  /** Password hashing cost; default production. */
  readonly scrypt?: ScryptHasherOptions
}

const storeLayer = (options: RuntimeOptions): Layer.Layer<StoreServices, unknown> =>
  options.databaseUrl === undefined
    ? PgliteStoreLive()
    : PostgresStoreLive({
        connectionString: options.databaseUrl,
        ...(options.databaseSchema !== undefined && { schema: options.databaseSchema })
      })

/**
 * Accord's runtime for this host: the PostgreSQL store (migrated as it starts) with its Authenticator replaced by the
 * JWT one over the host's public keys (in a merge the later layer wins), and the scrypt hasher. Resolves once the
 * store is up and the demo data is in, so a database that cannot be reached stops the start.
 */
export const makeAccordRuntime = async (options: RuntimeOptions): Promise<AccordRuntime> => {
  const runtime: AccordRuntime = ManagedRuntime.make(
    Layer.mergeAll(
      storeLayer(options),
      JwtAuthenticatorLive({
        key: { jwks: options.keys.jwks },
        issuer: JWT_ISSUER,
        audience: JWT_AUDIENCE,
        client: { claim: "client_id", scope: CLIENT_SCOPE }
      }),
      ScryptPasswordHasherLive(options.scrypt)
    )
  )
  try {
    // Seeds insert what is missing and never change a row, so restarting on the same database keeps its data.
    await runtime.runPromise(Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(demoSeed)))
  } catch (error) {
    await runtime.dispose()
    throw error
  }
  return runtime
}
