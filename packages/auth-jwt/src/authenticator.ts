import { Authenticator, ClientId, Principal, Unauthenticated, Unavailable, UserId } from "@accord/domain"
import { Clock, Effect, Layer, Option, Result, Schema } from "effect"
import {
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  errors,
  type FetchImplementation,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
  type JWTVerifyOptions
} from "jose"
import { resolveJwtConfig, type JwtAuthConfig, type JwtClientRule, type ResolvedJwtConfig } from "./config.js"

const invalidToken = new Unauthenticated({ reason: "invalid_token" })

/** The remote key set could not be fetched or read: the identity provider's fault, not the token's. */
class KeySetUnavailable {
  constructor(readonly cause: unknown) {}
}

/**
 * Wraps jose's remote key set (which caches, refetches on an unknown `kid` after the cooldown, and refetches once
 * the cache is older than its max age) so that a failed fetch stays distinguishable from a token no key matches.
 */
const guardRemote =
  (remote: JWTVerifyGetKey): JWTVerifyGetKey =>
  async (header, token) => {
    try {
      return await remote(header, token)
    } catch (cause) {
      if (cause instanceof errors.JWKSNoMatchingKey || cause instanceof errors.JWKSMultipleMatchingKeys) throw cause
      throw new KeySetUnavailable(cause)
    }
  }

/**
 * The most a key set may weigh. A JWKS holds a handful of keys (a few KiB); without a bound, an identity provider
 * that answers with hundreds of MiB (compromised, misconfigured, or an attacker's endpoint) grows the process by as
 * much (docs/SECURITY.md, "A key set is read up to a bound").
 */
export const MAX_JWKS_BYTES = 512 * 1024

class KeySetTooLarge extends Error {
  constructor() {
    super(`the key set is larger than ${MAX_JWKS_BYTES} bytes`)
  }
}

/** fetch, with the answer's body read up to `MAX_JWKS_BYTES`: a larger declared or streamed body fails the fetch. */
const fetchBounded: FetchImplementation = async (url, options) => {
  const response = await fetch(url, options)
  if (response.body === null) return response
  if (Number(response.headers.get("content-length") ?? 0) > MAX_JWKS_BYTES) {
    await response.body.cancel()
    throw new KeySetTooLarge()
  }
  const reader = response.body.getReader()
  const chunks: Array<Uint8Array> = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_JWKS_BYTES) {
      await reader.cancel()
      throw new KeySetTooLarge()
    }
    chunks.push(value)
  }
  return new Response(Buffer.concat(chunks), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers
  })
}

const keyOf = (key: ResolvedJwtConfig["key"]): Uint8Array | JWTVerifyGetKey => {
  switch (key._tag) {
    case "Secret":
      return key.secret
    case "LocalJwks":
      return createLocalJWKSet(key.jwks)
    case "RemoteJwks":
      return guardRemote(
        createRemoteJWKSet(key.url, {
          cooldownDuration: key.cooldownMs,
          cacheMaxAge: key.cacheMaxAgeMs,
          timeoutDuration: key.timeoutMs,
          [customFetch]: fetchBounded
        })
      )
  }
}

/**
 * Verifies with the configured key; when a token without `kid` matches several keys of a set (e.g. during a
 * rotation that publishes old and new key), tries each.
 */
const verifyWith = (key: Uint8Array | JWTVerifyGetKey) => async (token: string, options: JWTVerifyOptions) => {
  try {
    return (await (typeof key === "function" ? jwtVerify(token, key, options) : jwtVerify(token, key, options))).payload
  } catch (error) {
    if (!(error instanceof errors.JWKSMultipleMatchingKeys)) throw error
    for await (const candidate of error) {
      try {
        return (await jwtVerify(token, candidate, options)).payload
      } catch (inner) {
        if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner
      }
    }
    throw new errors.JWSSignatureVerificationFailed()
  }
}

const decodeUserId = Schema.decodeUnknownOption(UserId)
const decodeClientId = Schema.decodeUnknownOption(ClientId)

/** `scope` is a space-separated string (RFC 8693, RFC 9068); some providers send `scp` as an array instead. */
const scopesOf = (payload: JWTPayload): ReadonlyArray<string> => {
  const { scope, scp } = payload
  if (typeof scope === "string") return scope.split(" ")
  if (Array.isArray(scp)) return scp.filter((value): value is string => typeof value === "string")
  if (typeof scp === "string") return scp.split(" ")
  return []
}

/** The marker of a client token is the scope when the rule has one (then the claim must hold the id), else the claim. */
const isClientToken = (payload: JWTPayload, rule: JwtClientRule): boolean =>
  rule.scope === undefined ? payload[rule.claim] !== undefined : scopesOf(payload).includes(rule.scope)

/** The caller a verified token names; None when the claims that name it are missing or empty. */
export const principalOf = (payload: JWTPayload, client: JwtClientRule | undefined): Option.Option<Principal> =>
  client !== undefined && isClientToken(payload, client)
    ? Option.map(decodeClientId(payload[client.claim]), (clientId) => Principal.Client({ clientId }))
    : Option.map(decodeUserId(payload.sub), (userId) => Principal.User({ userId }))

/** Builds the authenticator service from a checked configuration. */
export const makeJwtAuthenticator = (config: ResolvedJwtConfig): Authenticator["Service"] => {
  const verify = verifyWith(keyOf(config.key))
  const retryAfterSeconds = config.key._tag === "RemoteJwks" ? config.key.retryAfterSeconds : 5
  const baseOptions: JWTVerifyOptions = {
    algorithms: [...config.algorithms],
    clockTolerance: config.clockToleranceSeconds,
    // A token that never expires cannot be revoked by waiting; refuse it.
    requiredClaims: ["exp"],
    ...(config.issuer !== undefined && { issuer: [...config.issuer] }),
    ...(config.audience !== undefined && { audience: [...config.audience] })
  }
  // jose reports every fault of the token itself (syntax, alg, signature, claims) as a JOSEError.
  const classify = (error: unknown): Effect.Effect<never, Unauthenticated | Unavailable> =>
    error instanceof KeySetUnavailable
      ? Effect.fail(new Unavailable({ reason: "identity_provider_unreachable", retryAfterSeconds, cause: error.cause }))
      : error instanceof errors.JOSEError
        ? Effect.fail(invalidToken)
        : Effect.die(error)
  return Authenticator.of({
    authenticate: (token) =>
      Clock.currentTimeMillis.pipe(
        // The clock comes from Effect, so tests move it with TestClock instead of sleeping.
        Effect.flatMap((millis) =>
          Effect.tryPromise({
            try: () => verify(token, { ...baseOptions, currentDate: new Date(millis) }),
            catch: (error) => error
          })
        ),
        Effect.catch(classify),
        Effect.flatMap((payload) =>
          Option.match(principalOf(payload, config.client), {
            onNone: () => Effect.fail(invalidToken),
            onSome: Effect.succeed
          })
        )
      )
  })
}

/**
 * The core's Authenticator over JWTs (jose). Provide it after the store so it replaces the store's token table:
 * `Layer.provideMerge(JwtAuthenticatorLive(config), store)` or `Layer.merge(store, JwtAuthenticatorLive(config))`.
 * Throws a `JwtConfigError` at once when the configuration cannot work.
 */
export const JwtAuthenticatorLive = (config: JwtAuthConfig): Layer.Layer<Authenticator> => {
  const resolved = Result.getOrThrowWith(resolveJwtConfig(config), (error) => error)
  return Layer.sync(Authenticator, () => makeJwtAuthenticator(resolved))
}
