import { Seed } from "@accord/domain"
import type { AccordRuntime } from "@accord/core"
import { ScryptPasswordHasherLive, type ScryptHasherOptions } from "@accord/node/scrypt"
import { JwtAuthenticatorLive } from "@accord/auth-jwt"
import { makeMemoryStore } from "@accord/store-memory"
import { Layer, ManagedRuntime, Schema } from "effect"
import { CLIENT_SCOPE, JWT_AUDIENCE, JWT_ISSUER } from "./tokens.js"

/** Demo data: the payment methods of user `u_1`. No tokens: users are whoever a valid JWT's `sub` names. */
export const demoSeed = Schema.decodeUnknownSync(Seed)({
  payment_methods: [
    { id: "pm_card", user_id: "u_1", is_default: true },
    { id: "pm_bank", user_id: "u_1" }
  ]
})

export interface RuntimeOptions {
  readonly jwtSecret: string
  /** Password hashing cost; default production. */
  readonly scrypt?: ScryptHasherOptions
}

/**
 * Accord's runtime for this host: the memory store, with its Authenticator replaced by the JWT one (in a merge the
 * later layer wins), and the scrypt hasher.
 */
export const makeAccordRuntime = (options: RuntimeOptions): AccordRuntime =>
  ManagedRuntime.make(
    Layer.mergeAll(
      makeMemoryStore(demoSeed),
      JwtAuthenticatorLive({
        key: { secret: options.jwtSecret },
        issuer: JWT_ISSUER,
        audience: JWT_AUDIENCE,
        client: { claim: "client_id", scope: CLIENT_SCOPE }
      }),
      ScryptPasswordHasherLive(options.scrypt)
    )
  )
