import { Data, Redacted, Result } from "effect"
import type { JSONWebKeySet } from "jose"

/** Where verification keys come from: exactly one of a shared secret, a JWKS URL or a key set held in memory. */
export type JwtKeySource =
  | {
      /** HMAC secret (HS256/384/512), at least 32 bytes of UTF-8 (RFC 7518 3.2: no shorter than the hash). */
      readonly secret: string | Redacted.Redacted<string>
    }
  | {
      /** The identity provider's JWKS endpoint: https, or http on a loopback host (tests, local development). */
      readonly jwksUrl: string | URL
      /** After a fetch, how long an unknown `kid` waits before it may trigger another one. Default 30 000 ms. */
      readonly cooldownMs?: number
      /** How long a fetched key set is used before it is fetched again. Default 600 000 ms. */
      readonly cacheMaxAgeMs?: number
      /** Fetch timeout. Default 5000 ms. */
      readonly timeoutMs?: number
      /** `Retry-After` sent with the 503 when the key set cannot be fetched. Default 5. */
      readonly retryAfterSeconds?: number
    }
  | {
      /** A JWKS document (public keys) the host already has, e.g. loaded from a file. */
      readonly jwks: JSONWebKeySet
    }

/**
 * How an application (client) credential is told apart from a user's.
 * - `{ claim }`: a token that carries `claim` is a client credential, and the claim's value is the client id.
 * - `{ claim, scope }`: a token whose `scope` (space-separated) or `scp` (array) contains `scope` is a client
 *   credential, and `claim` must hold its id.
 * Every other token is a user's, identified by `sub`. A token marked as a client whose id claim is missing, empty
 * or not a string is invalid (never taken for a user).
 */
export interface JwtClientRule {
  /** The claim holding the client id, e.g. `client_id` (RFC 9068) or a custom `accord_client`. */
  readonly claim: string
  /** Required scope value, e.g. `accord:client`. Set it when user tokens carry `claim` too (RFC 9068 ones do). */
  readonly scope?: string
}

export interface JwtAuthConfig {
  readonly key: JwtKeySource
  /** Accepted `iss` value(s); unchecked when absent. */
  readonly issuer?: string | ReadonlyArray<string>
  /** Accepted `aud` value(s) (any one must be in the token's `aud`); unchecked when absent. */
  readonly audience?: string | ReadonlyArray<string>
  /**
   * Accepted `alg` values. Default: HS256, HS384, HS512 with a secret; the RSA, RSA-PSS, ECDSA and EdDSA ones with a
   * key set. A secret only takes HMAC algorithms and a key set only asymmetric ones (no algorithm confusion).
   */
  readonly algorithms?: ReadonlyArray<string>
  /** Leeway for `exp` and `nbf`, in seconds, 0 to 300. Default 5. */
  readonly clockToleranceSeconds?: number
  /** Absent: every token is a user's. */
  readonly client?: JwtClientRule
}

/** The part of the configuration an error is about. */
export type JwtSetting = "key" | "issuer" | "audience" | "algorithms" | "clockTolerance" | "client"

/** A configuration that cannot work; `message` says what is wrong and what to do. */
export class JwtConfigError extends Data.TaggedError("JwtConfigError")<{
  readonly setting: JwtSetting
  readonly message: string
}> {}

export const HMAC_ALGORITHMS: ReadonlyArray<string> = ["HS256", "HS384", "HS512"]
export const ASYMMETRIC_ALGORITHMS: ReadonlyArray<string> = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
  "Ed25519"
]
export const DEFAULT_CLOCK_TOLERANCE_SECONDS = 5
const MAX_CLOCK_TOLERANCE_SECONDS = 300
const MIN_SECRET_BYTES = 32

/** The configuration after every check, in the form the authenticator uses. */
export interface ResolvedJwtConfig {
  readonly key:
    | { readonly _tag: "Secret"; readonly secret: Uint8Array }
    | {
        readonly _tag: "RemoteJwks"
        readonly url: URL
        readonly cooldownMs: number
        readonly cacheMaxAgeMs: number
        readonly timeoutMs: number
        readonly retryAfterSeconds: number
      }
    | { readonly _tag: "LocalJwks"; readonly jwks: JSONWebKeySet }
  readonly issuer: ReadonlyArray<string> | undefined
  readonly audience: ReadonlyArray<string> | undefined
  readonly algorithms: ReadonlyArray<string>
  readonly clockToleranceSeconds: number
  readonly client: JwtClientRule | undefined
}

const fail = (setting: JwtSetting, message: string) => Result.fail(new JwtConfigError({ setting, message }))

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

const nonEmptyList = (setting: "issuer" | "audience", value: string | ReadonlyArray<string> | undefined) => {
  if (value === undefined) return Result.succeed(undefined)
  const list = typeof value === "string" ? [value] : value
  if (list.length === 0 || list.some((item) => item.length === 0))
    return fail(setting, `the JWT ${setting} must not be empty`)
  return Result.succeed(list)
}

const isNonNegativeInteger = (value: number) => Number.isSafeInteger(value) && value >= 0

const resolveKey = (key: JwtKeySource): Result.Result<ResolvedJwtConfig["key"], JwtConfigError> => {
  if ("secret" in key) {
    const secret = new TextEncoder().encode(Redacted.isRedacted(key.secret) ? Redacted.value(key.secret) : key.secret)
    return secret.length < MIN_SECRET_BYTES
      ? fail("key", `the JWT secret must be at least ${MIN_SECRET_BYTES} bytes (it has ${secret.length})`)
      : Result.succeed({ _tag: "Secret", secret })
  }
  if ("jwks" in key) {
    return Array.isArray(key.jwks.keys) && key.jwks.keys.length > 0
      ? Result.succeed({ _tag: "LocalJwks", jwks: key.jwks })
      : fail("key", "the JWKS must have a non-empty `keys` array")
  }
  let url: URL
  try {
    url = new URL(key.jwksUrl)
  } catch {
    return fail("key", `the JWKS URL is not a URL: ${String(key.jwksUrl)}`)
  }
  // Keys fetched over plain HTTP could be swapped in transit, and whoever swaps them can mint any token.
  if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK_HOSTS.has(url.hostname))) {
    return fail("key", `the JWKS URL must use https (http only on localhost/127.0.0.1/[::1]): ${url.href}`)
  }
  const timings = {
    cooldownMs: key.cooldownMs ?? 30_000,
    cacheMaxAgeMs: key.cacheMaxAgeMs ?? 600_000,
    timeoutMs: key.timeoutMs ?? 5_000,
    retryAfterSeconds: key.retryAfterSeconds ?? 5
  }
  const invalid = Object.entries(timings).find(([, value]) => !isNonNegativeInteger(value))
  if (invalid !== undefined) return fail("key", `${invalid[0]} must be a non-negative integer`)
  return Result.succeed({ _tag: "RemoteJwks", url, ...timings })
}

/** Checks a configuration and fills in the defaults. */
export const resolveJwtConfig = (config: JwtAuthConfig): Result.Result<ResolvedJwtConfig, JwtConfigError> =>
  Result.gen(function* () {
    const key = yield* resolveKey(config.key)
    const family = key._tag === "Secret" ? HMAC_ALGORITHMS : ASYMMETRIC_ALGORITHMS
    const algorithms = config.algorithms ?? family
    const foreign = algorithms.filter((alg) => !family.includes(alg))
    if (algorithms.length === 0)
      return yield* fail("algorithms", "the list of accepted JWT algorithms must not be empty")
    if (foreign.length > 0) {
      return yield* fail(
        "algorithms",
        `JWT algorithm(s) ${foreign.join(", ")} cannot be used with ${key._tag === "Secret" ? "a secret" : "a key set"}; choose from ${family.join(", ")}`
      )
    }
    const clockToleranceSeconds = config.clockToleranceSeconds ?? DEFAULT_CLOCK_TOLERANCE_SECONDS
    if (!isNonNegativeInteger(clockToleranceSeconds) || clockToleranceSeconds > MAX_CLOCK_TOLERANCE_SECONDS) {
      return yield* fail(
        "clockTolerance",
        `the clock tolerance must be an integer from 0 to ${MAX_CLOCK_TOLERANCE_SECONDS} seconds`
      )
    }
    if (config.client !== undefined && (config.client.claim.length === 0 || config.client.scope === "")) {
      return yield* fail("client", "the client claim and scope must not be empty")
    }
    if (config.client?.claim === "sub" && config.client.scope === undefined) {
      return yield* fail("client", "a client claim of `sub` needs a client scope, or every token would be a client's")
    }
    return {
      key,
      issuer: yield* nonEmptyList("issuer", config.issuer),
      audience: yield* nonEmptyList("audience", config.audience),
      algorithms,
      clockToleranceSeconds,
      client: config.client
    }
  })

/** The environment variables `jwtConfigFromEnv` reads (a `process.env` fits). */
export type JwtEnv = Readonly<Record<string, string | undefined>>

/**
 * Reads the JWT settings of the server CLI (`--auth jwt`):
 * - `JWT_SECRET` (HMAC) or `JWKS_URL` (https JWKS endpoint): exactly one;
 * - `JWT_ISSUER`, `JWT_AUDIENCE`: required, so a token the same issuer minted for another API is refused;
 * - `JWT_ALGORITHMS`: optional, comma-separated (e.g. `ES256,RS256`);
 * - `JWT_CLIENT_CLAIM` and/or `JWT_CLIENT_SCOPE`: optional client rule (`JwtClientRule`); the scope alone uses the
 *   `client_id` claim;
 * - `JWT_CLOCK_TOLERANCE_S`: optional integer seconds, default 5.
 * Empty values count as unset. The result still goes through `resolveJwtConfig`, so every error shows here.
 */
export const jwtConfigFromEnv = (env: JwtEnv): Result.Result<JwtAuthConfig, JwtConfigError> =>
  Result.gen(function* () {
    const read = (name: string) => {
      const value = env[name]?.trim()
      return value === undefined || value === "" ? undefined : value
    }
    const secret = read("JWT_SECRET")
    const jwksUrl = read("JWKS_URL")
    if (secret !== undefined && jwksUrl !== undefined) {
      return yield* fail("key", "set either JWT_SECRET or JWKS_URL, not both")
    }
    const key: JwtKeySource | undefined =
      secret !== undefined ? { secret: Redacted.make(secret) } : jwksUrl !== undefined ? { jwksUrl } : undefined
    if (key === undefined)
      return yield* fail("key", "JWT authentication needs JWT_SECRET (HMAC) or JWKS_URL (public keys)")
    const issuer = read("JWT_ISSUER")
    if (issuer === undefined)
      return yield* fail("issuer", "JWT_ISSUER is required (the `iss` every accepted token carries)")
    const audience = read("JWT_AUDIENCE")
    if (audience === undefined) {
      return yield* fail(
        "audience",
        "JWT_AUDIENCE is required (the `aud` every accepted token carries, usually this API's URL or name)"
      )
    }
    const tolerance = read("JWT_CLOCK_TOLERANCE_S")
    if (tolerance !== undefined && !/^\d{1,6}$/.test(tolerance)) {
      return yield* fail(
        "clockTolerance",
        `JWT_CLOCK_TOLERANCE_S must be a whole number of seconds, got "${tolerance}"`
      )
    }
    const algorithms = read("JWT_ALGORITHMS")
      ?.split(",")
      .map((alg) => alg.trim())
      .filter((alg) => alg !== "")
    const clientClaim = read("JWT_CLIENT_CLAIM")
    const clientScope = read("JWT_CLIENT_SCOPE")
    const config: JwtAuthConfig = {
      key,
      issuer,
      audience,
      ...(algorithms !== undefined && { algorithms }),
      ...(tolerance !== undefined && { clockToleranceSeconds: Number(tolerance) }),
      ...((clientClaim !== undefined || clientScope !== undefined) && {
        client: { claim: clientClaim ?? "client_id", ...(clientScope !== undefined && { scope: clientScope }) }
      })
    }
    // Same checks as the layer, reported now and naming the variable the operator set.
    const variables: Record<JwtSetting, string> = {
      key: secret !== undefined ? "JWT_SECRET" : "JWKS_URL",
      issuer: "JWT_ISSUER",
      audience: "JWT_AUDIENCE",
      algorithms: "JWT_ALGORITHMS",
      clockTolerance: "JWT_CLOCK_TOLERANCE_S",
      client: "JWT_CLIENT_CLAIM / JWT_CLIENT_SCOPE"
    }
    yield* Result.mapError(
      resolveJwtConfig(config),
      (error) =>
        new JwtConfigError({ setting: error.setting, message: `${variables[error.setting]}: ${error.message}` })
    )
    return config
  })
