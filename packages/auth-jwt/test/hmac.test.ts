import { describe, expect, it } from "@effect/vitest"
import { Authenticator, isWellFormedToken, Principal, type UserId } from "@accord/domain"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { UnsecuredJWT } from "jose"
import { JwtAuthenticatorLive, type JwtAuthConfig } from "@accord/auth-jwt"
import { AUDIENCE, forge, ISSUER, NOW, outcomeOf, SECRET, secretConfig, secretKey, sign } from "./helpers.js"

/** Puts the TestClock at NOW, then checks `token` against `config`. */
const at = (config: JwtAuthConfig, token: string, offsetSeconds = 0) =>
  Effect.gen(function* () {
    yield* TestClock.setTime((NOW + offsetSeconds) * 1000)
    return yield* outcomeOf(config, token)
  })

const check = (token: string, offsetSeconds = 0) => at(secretConfig, token, offsetSeconds)

describe("HMAC secret: accepted tokens", () => {
  it.effect("a valid HS256 token is the user named by sub", () =>
    Effect.gen(function* () {
      const token = yield* Effect.promise(() => sign(secretKey))
      expect(isWellFormedToken(token)).toBe(true)
      expect(yield* check(token)).toBe("user:u_1")
    })
  )

  it.effect("HS384 and HS512 are accepted by default", () =>
    Effect.gen(function* () {
      for (const alg of ["HS384", "HS512"]) {
        const token = yield* Effect.promise(() => sign(secretKey, { alg, claims: { sub: `user-${alg}` } }))
        expect(yield* check(token)).toBe(`user:user-${alg}`)
      }
    })
  )

  it.effect("the principal is a core Principal.User with a branded id", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const token = yield* Effect.promise(() => sign(secretKey))
      const principal = yield* Effect.flatMap(Authenticator, (auth) => auth.authenticate(token)).pipe(
        Effect.provide(JwtAuthenticatorLive(secretConfig))
      )
      expect(principal).toStrictEqual(Principal.User({ userId: "u_1" as UserId }))
    })
  )

  it.effect("issuer and audience are unchecked when not configured", () =>
    Effect.gen(function* () {
      const token = yield* Effect.promise(() => sign(secretKey, { claims: { iss: undefined, aud: undefined } }))
      expect(yield* at({ key: { secret: SECRET } }, token)).toBe("user:u_1")
      expect(yield* check(token)).toBe("invalid_token")
    })
  )

  it.effect("several accepted issuers and audiences; aud may be an array", () =>
    Effect.gen(function* () {
      const config: JwtAuthConfig = { ...secretConfig, issuer: [ISSUER, "https://other"], audience: ["x", AUDIENCE] }
      const token = yield* Effect.promise(() =>
        sign(secretKey, { claims: { iss: "https://other", aud: ["y", AUDIENCE] } })
      )
      expect(yield* at(config, token)).toBe("user:u_1")
    })
  )
})

describe("HMAC secret: client principals", () => {
  const byClaim: JwtAuthConfig = { ...secretConfig, client: { claim: "accord_client" } }
  const byScope: JwtAuthConfig = { ...secretConfig, client: { claim: "client_id", scope: "accord:client" } }

  it.effect("claim rule: a token carrying the claim is that client, others are users", () =>
    Effect.gen(function* () {
      const client = yield* Effect.promise(() => sign(secretKey, { claims: { sub: undefined, accord_client: "web" } }))
      const user = yield* Effect.promise(() => sign(secretKey))
      expect(yield* at(byClaim, client)).toBe("client:web")
      expect(yield* at(byClaim, user)).toBe("user:u_1")
    })
  )

  it.effect("claim rule: an empty or non-string client claim is invalid_token, not a user", () =>
    Effect.gen(function* () {
      for (const accord_client of ["", 42, ["web"]]) {
        const token = yield* Effect.promise(() => sign(secretKey, { claims: { accord_client } }))
        expect(yield* at(byClaim, token)).toBe("invalid_token")
      }
    })
  )

  it.effect("scope rule: client only when scope contains the value (RFC 9068 user tokens carry client_id too)", () =>
    Effect.gen(function* () {
      const client = yield* Effect.promise(() =>
        sign(secretKey, { claims: { sub: "web", client_id: "web", scope: "plans:write accord:client" } })
      )
      const userOfThatClient = yield* Effect.promise(() =>
        sign(secretKey, { claims: { client_id: "web", scope: "openid accord:clientele" } })
      )
      const scpArray = yield* Effect.promise(() =>
        sign(secretKey, { claims: { client_id: "svc", scp: ["accord:client"] } })
      )
      expect(yield* at(byScope, client)).toBe("client:web")
      expect(yield* at(byScope, userOfThatClient)).toBe("user:u_1")
      expect(yield* at(byScope, scpArray)).toBe("client:svc")
    })
  )

  it.effect("scope rule: the scope without the id claim is invalid_token", () =>
    Effect.gen(function* () {
      const token = yield* Effect.promise(() => sign(secretKey, { claims: { scope: "accord:client" } }))
      expect(yield* at(byScope, token)).toBe("invalid_token")
    })
  )
})

describe("HMAC secret: refused tokens are invalid_token", () => {
  it.effect("bad signature (another secret)", () =>
    Effect.gen(function* () {
      const token = yield* Effect.promise(() =>
        sign(new TextEncoder().encode("another-secret-that-is-long-enough-too"))
      )
      expect(yield* check(token)).toBe("invalid_token")
    })
  )

  it.effect("a tampered payload", () =>
    Effect.gen(function* () {
      const [header, , signature] = (yield* Effect.promise(() => sign(secretKey))).split(".")
      const admin = forge({}, { iss: ISSUER, aud: AUDIENCE, sub: "admin", exp: NOW + 3600 }).split(".")[1]
      expect(yield* check(`${header}.${admin}.${signature}`)).toBe("invalid_token")
    })
  )

  it.effect("exp: refused beyond the 5 s tolerance, accepted within it", () =>
    Effect.gen(function* () {
      const token = yield* Effect.promise(() => sign(secretKey, { claims: { exp: NOW } }))
      expect(yield* check(token, 4)).toBe("user:u_1")
      expect(yield* check(token, 5)).toBe("invalid_token")
      expect(yield* check(token, 3600)).toBe("invalid_token")
    })
  )

  it.effect("exp: the tolerance is configurable", () =>
    Effect.gen(function* () {
      const token = yield* Effect.promise(() => sign(secretKey, { claims: { exp: NOW } }))
      expect(yield* at({ ...secretConfig, clockToleranceSeconds: 0 }, token, 0)).toBe("invalid_token")
      expect(yield* at({ ...secretConfig, clockToleranceSeconds: 60 }, token, 59)).toBe("user:u_1")
    })
  )

  it.effect("exp: a token valid now is refused once the clock passes it (TestClock.adjust, no sleeping)", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const token = yield* Effect.promise(() => sign(secretKey, { claims: { exp: NOW + 60 } }))
      expect(yield* outcomeOf(secretConfig, token)).toBe("user:u_1")
      yield* TestClock.adjust("66 seconds")
      expect(yield* outcomeOf(secretConfig, token)).toBe("invalid_token")
    })
  )

  it.effect("exp missing: a token that never expires is refused", () =>
    Effect.gen(function* () {
      const token = yield* Effect.promise(() => sign(secretKey, { claims: { exp: undefined } }))
      expect(yield* check(token)).toBe("invalid_token")
    })
  )

  it.effect("nbf in the future: refused beyond the tolerance, accepted within it", () =>
    Effect.gen(function* () {
      const token = yield* Effect.promise(() => sign(secretKey, { claims: { nbf: NOW + 60 } }))
      expect(yield* check(token)).toBe("invalid_token")
      expect(yield* check(token, 56)).toBe("user:u_1")
    })
  )

  it.effect("wrong issuer, missing issuer", () =>
    Effect.gen(function* () {
      const wrong = yield* Effect.promise(() => sign(secretKey, { claims: { iss: "https://evil.example" } }))
      const missing = yield* Effect.promise(() => sign(secretKey, { claims: { iss: undefined } }))
      expect(yield* check(wrong)).toBe("invalid_token")
      expect(yield* check(missing)).toBe("invalid_token")
    })
  )

  it.effect("wrong audience, missing audience", () =>
    Effect.gen(function* () {
      const wrong = yield* Effect.promise(() => sign(secretKey, { claims: { aud: ["other-api"] } }))
      const missing = yield* Effect.promise(() => sign(secretKey, { claims: { aud: undefined } }))
      expect(yield* check(wrong)).toBe("invalid_token")
      expect(yield* check(missing)).toBe("invalid_token")
    })
  )

  it.effect("missing, empty or non-string sub", () =>
    Effect.gen(function* () {
      for (const sub of [undefined, "", 7]) {
        const token = yield* Effect.promise(() => sign(secretKey, { claims: { sub } }))
        expect(yield* check(token)).toBe("invalid_token")
      }
    })
  )

  it.effect(
    "a sub a store could not keep as sent is invalid_token: NUL, control characters, lone surrogates, too long",
    () =>
      Effect.gen(function* () {
        for (const sub of [
          "u\u0000x",
          "u\u001fx",
          "u\u007f",
          "u\u0085",
          "u\ud800",
          "\udc00u",
          "u\ud800\ud800",
          "u".repeat(256)
        ]) {
          const token = yield* Effect.promise(() => sign(secretKey, { claims: { sub } }))
          expect(yield* check(token), JSON.stringify(sub)).toBe("invalid_token")
        }
        for (const sub of ["u".repeat(255), "jürgen", "user-\ud83d\ude00", "a b"]) {
          const token = yield* Effect.promise(() => sign(secretKey, { claims: { sub } }))
          expect(yield* check(token), JSON.stringify(sub)).toBe(`user:${sub}`)
        }
      })
  )

  it.effect("alg none (an unsecured JWT)", () =>
    Effect.gen(function* () {
      const unsecured = new UnsecuredJWT({ iss: ISSUER, aud: AUDIENCE, sub: "u_1", exp: NOW + 3600 }).encode()
      expect(yield* check(unsecured)).toBe("invalid_token")
      expect(
        yield* check(forge({ alg: "none" }, { iss: ISSUER, aud: AUDIENCE, sub: "u_1", exp: NOW + 3600 }, ""))
      ).toBe("invalid_token")
    })
  )

  it.effect("an HMAC algorithm left out of `algorithms`", () =>
    Effect.gen(function* () {
      const token = yield* Effect.promise(() => sign(secretKey, { alg: "HS512" }))
      expect(yield* at({ ...secretConfig, algorithms: ["HS256"] }, token)).toBe("invalid_token")
    })
  )

  it.effect("an asymmetric alg in the header (algorithm confusion)", () =>
    Effect.gen(function* () {
      const payload = { iss: ISSUER, aud: AUDIENCE, sub: "u_1", exp: NOW + 3600 }
      for (const alg of ["RS256", "ES256", "EdDSA"]) expect(yield* check(forge({ alg }, payload))).toBe("invalid_token")
    })
  )

  it.effect("garbage and near-JWTs", () =>
    Effect.gen(function* () {
      const payload = { iss: ISSUER, aud: AUDIENCE, sub: "u_1", exp: NOW + 3600 }
      const samples = [
        "abc",
        "a.b.c",
        "...",
        "a.b",
        "a.b.c.d.e",
        forge({ alg: "HS256" }, payload).replace(/\.[^.]*$/, ".***"),
        `${forge({ alg: "HS256" }, payload)}.extra`,
        forge({ alg: "HS256", crit: ["exp"], exp: 1 }, payload),
        forge({ alg: "HS256", b64: false, crit: ["b64"] }, payload),
        `eyJhbGciOiJIUzI1NiJ9.bm90IGpzb24.${"A".repeat(43)}`
      ]
      for (const token of samples) expect(yield* check(token)).toBe("invalid_token")
    })
  )

  it.effect("any string the grammar admits is a user or invalid_token, never a defect", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const grammar = fc.stringMatching(/^[A-Za-z0-9._~+/-]{1,120}=*$/)
      const jwtish = fc
        .tuple(fc.json(), fc.json(), fc.stringMatching(/^[A-Za-z0-9_-]{0,60}$/))
        .map(([header, payload, signature]) =>
          forge(JSON.parse(header) as object, JSON.parse(payload) as object, signature)
        )
      const samples = [...fc.sample(grammar, 150), ...fc.sample(jwtish, 150)]
      for (const token of samples) {
        const outcome = yield* outcomeOf(secretConfig, token)
        expect(outcome).toBe("invalid_token")
      }
    })
  )
})

describe("JwtAuthenticatorLive as a layer", () => {
  it.effect("merged after a store's layer, it replaces the store's Authenticator", () =>
    Effect.gen(function* () {
      yield* TestClock.setTime(NOW * 1000)
      const storeAuthenticator = Layer.succeed(
        Authenticator,
        Authenticator.of({ authenticate: () => Effect.succeed(Principal.User({ userId: "from-store" as UserId })) })
      )
      const token = yield* Effect.promise(() => sign(secretKey))
      const viaJwt = yield* Effect.flatMap(Authenticator, (auth) => auth.authenticate(token)).pipe(
        Effect.provide(Layer.merge(storeAuthenticator, JwtAuthenticatorLive(secretConfig)))
      )
      expect(viaJwt).toStrictEqual(Principal.User({ userId: "u_1" as UserId }))
    })
  )

  it("refuses a configuration that cannot work, at once", () => {
    expect(() => JwtAuthenticatorLive({ key: { secret: "short" } })).toThrow(/at least 32 bytes/)
    expect(() => JwtAuthenticatorLive({ key: { jwksUrl: "http://idp.example/jwks" } })).toThrow(/https/)
  })
})
