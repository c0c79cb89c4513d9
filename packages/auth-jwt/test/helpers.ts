import { Authenticator, type Principal, type Unauthenticated, type Unavailable } from "@accord/domain"
import { Effect, type Result } from "effect"
import { base64url, SignJWT, type CryptoKey, type JWTPayload } from "jose"
import { JwtAuthenticatorLive, type JwtAuthConfig } from "@accord/auth-jwt"

export const SECRET = "test-secret-that-is-at-least-32-bytes-long"
export const ISSUER = "https://issuer.example"
export const AUDIENCE = "accord-api"
/** 2026-11-21T10:00:00Z in seconds: the instant the tests put the clock at. */
export const NOW = 1_795_255_200

export interface SignOptions {
  readonly alg?: string
  readonly kid?: string
  /** The claims; `undefined` values are left out, so a test can drop a default claim. */
  readonly claims?: Readonly<Record<string, unknown>>
}

/** Signs `claims` on top of valid defaults (iss, aud, sub, iat, exp one hour after NOW). */
export const sign = async (key: Uint8Array | CryptoKey, options: SignOptions = {}): Promise<string> => {
  const claims: Record<string, unknown> = {
    iss: ISSUER,
    aud: AUDIENCE,
    sub: "u_1",
    iat: NOW,
    exp: NOW + 3600,
    ...options.claims
  }
  const payload = Object.fromEntries(Object.entries(claims).filter(([, value]) => value !== undefined)) as JWTPayload
  return new SignJWT(payload)
    .setProtectedHeader({ alg: options.alg ?? "HS256", ...(options.kid !== undefined && { kid: options.kid }) })
    .sign(key)
}

export const secretKey = new TextEncoder().encode(SECRET)

/** A JWT with any header and payload and a signature of random bytes, for the tokens no key could have signed. */
export const forge = (header: object, payload: object, signature = "c2lnbmF0dXJl"): string =>
  `${base64url.encode(JSON.stringify(header))}.${base64url.encode(JSON.stringify(payload))}.${signature}`

/** Runs one authentication through a fresh layer built from `config`, outcome as a Result. */
export const authenticateWith = (
  config: JwtAuthConfig,
  token: string
): Effect.Effect<Result.Result<Principal, Unauthenticated | Unavailable>> =>
  Effect.result(Effect.flatMap(Authenticator, (authenticator) => authenticator.authenticate(token))).pipe(
    Effect.provide(JwtAuthenticatorLive(config))
  )

/** An authenticator service built once, for tests that need jose's key-set cache to persist across calls. */
export const buildAuthenticator = (config: JwtAuthConfig): Promise<Authenticator["Service"]> =>
  Effect.runPromise(Effect.provide(Authenticator, JwtAuthenticatorLive(config)))

export const secretConfig: JwtAuthConfig = { key: { secret: SECRET }, issuer: ISSUER, audience: AUDIENCE }

/** An outcome as one readable string: `user:<id>`, `client:<id>`, `invalid_token`, `missing` or `unavailable:<reason>`. */
export const describeOutcome = (outcome: Result.Result<Principal, Unauthenticated | Unavailable>): string => {
  if (outcome._tag === "Success") {
    const principal = outcome.success
    return principal._tag === "User" ? `user:${principal.userId}` : `client:${principal.clientId}`
  }
  const error = outcome.failure
  return error._tag === "Unauthenticated" ? error.reason : `unavailable:${error.reason}`
}

/** `authenticateWith`, described. */
export const outcomeOf = (config: JwtAuthConfig, token: string): Effect.Effect<string> =>
  Effect.map(authenticateWith(config, token), describeOutcome)
