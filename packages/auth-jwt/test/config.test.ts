import { describe, expect, it } from "@effect/vitest"
import { Redacted, Result } from "effect"
import { jwtConfigFromEnv, resolveJwtConfig, type JwtAuthConfig, type JwtEnv } from "@accord/auth-jwt"
import { AUDIENCE, ISSUER, SECRET } from "./helpers.js"

const base: JwtEnv = { JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE }

const configOf = (env: JwtEnv): JwtAuthConfig => {
  const result = jwtConfigFromEnv(env)
  if (Result.isFailure(result)) throw new Error(`unexpected: ${result.failure.message}`)
  return result.success
}

const errorOf = (env: JwtEnv): { setting: string; message: string } => {
  const result = jwtConfigFromEnv(env)
  if (Result.isSuccess(result)) throw new Error("expected a configuration error")
  return { setting: result.failure.setting, message: result.failure.message }
}

describe("jwtConfigFromEnv", () => {
  it("JWT_SECRET: the secret is kept Redacted, issuer and audience are set, no client rule", () => {
    const config = configOf({ ...base, JWT_SECRET: SECRET })
    expect("secret" in config.key && Redacted.isRedacted(config.key.secret)).toBe(true)
    expect(JSON.stringify(config)).not.toContain(SECRET)
    expect(config).toMatchObject({ issuer: ISSUER, audience: AUDIENCE })
    expect(config.client).toBeUndefined()
    expect(config.clockToleranceSeconds).toBeUndefined()
  })

  it("JWKS_URL with every optional setting", () => {
    const config = configOf({
      ...base,
      JWKS_URL: "https://idp.example/.well-known/jwks.json",
      JWT_ALGORITHMS: " ES256, RS256 ",
      JWT_CLIENT_CLAIM: "azp",
      JWT_CLIENT_SCOPE: "accord:client",
      JWT_CLOCK_TOLERANCE_S: "30"
    })
    expect(config).toStrictEqual({
      key: { jwksUrl: "https://idp.example/.well-known/jwks.json" },
      issuer: ISSUER,
      audience: AUDIENCE,
      algorithms: ["ES256", "RS256"],
      clockToleranceSeconds: 30,
      client: { claim: "azp", scope: "accord:client" }
    })
  })

  it("the client rule: JWT_CLIENT_CLAIM alone, or JWT_CLIENT_SCOPE alone with the client_id claim", () => {
    expect(configOf({ ...base, JWT_SECRET: SECRET, JWT_CLIENT_CLAIM: "accord_client" }).client).toStrictEqual({
      claim: "accord_client"
    })
    expect(configOf({ ...base, JWT_SECRET: SECRET, JWT_CLIENT_SCOPE: "accord:client" }).client).toStrictEqual({
      claim: "client_id",
      scope: "accord:client"
    })
  })

  it("empty values count as unset", () => {
    expect(configOf({ ...base, JWT_SECRET: SECRET, JWKS_URL: "", JWT_CLIENT_CLAIM: " " }).client).toBeUndefined()
  })

  it.each([
    [{ JWT_SECRET: SECRET, JWKS_URL: "https://idp.example/jwks" }, "key", /either JWT_SECRET or JWKS_URL, not both/],
    [{}, "key", /needs JWT_SECRET .* or JWKS_URL/],
    [{ JWT_SECRET: "too-short" }, "key", /^JWT_SECRET: .*at least 32 bytes \(it has 9\)/],
    [{ JWKS_URL: "not a url" }, "key", /^JWKS_URL: the JWKS URL is not a URL/],
    [{ JWKS_URL: "http://idp.example/jwks" }, "key", /^JWKS_URL: .*must use https/],
    [{ JWT_SECRET: SECRET, JWT_ISSUER: "" }, "issuer", /JWT_ISSUER is required/],
    [{ JWT_SECRET: SECRET, JWT_AUDIENCE: undefined }, "audience", /JWT_AUDIENCE is required/],
    [
      { JWT_SECRET: SECRET, JWT_ALGORITHMS: "RS256" },
      "algorithms",
      /^JWT_ALGORITHMS: .*RS256 cannot be used with a secret/
    ],
    [
      { JWKS_URL: "https://idp.example/jwks", JWT_ALGORITHMS: "HS256,ES256" },
      "algorithms",
      /HS256 cannot be used with a key set/
    ],
    [{ JWKS_URL: "https://idp.example/jwks", JWT_ALGORITHMS: "none" }, "algorithms", /none cannot be used/],
    [{ JWT_SECRET: SECRET, JWT_ALGORITHMS: " , " }, "algorithms", /must not be empty/],
    [{ JWT_SECRET: SECRET, JWT_CLOCK_TOLERANCE_S: "five" }, "clockTolerance", /whole number of seconds, got "five"/],
    [{ JWT_SECRET: SECRET, JWT_CLOCK_TOLERANCE_S: "-1" }, "clockTolerance", /whole number/],
    [{ JWT_SECRET: SECRET, JWT_CLOCK_TOLERANCE_S: "301" }, "clockTolerance", /^JWT_CLOCK_TOLERANCE_S: .*0 to 300/],
    [
      { JWT_SECRET: SECRET, JWT_CLIENT_CLAIM: "sub" },
      "client",
      /^JWT_CLIENT_CLAIM \/ JWT_CLIENT_SCOPE: .*needs a client scope/
    ]
  ] as const)("refuses %o (%s)", (env, setting, message) => {
    const error = errorOf({ ...base, ...env })
    expect(error.setting).toBe(setting)
    expect(error.message).toMatch(message)
    expect(error.message).not.toContain(SECRET)
  })
})

describe("resolveJwtConfig", () => {
  it("defaults: 5 s tolerance, the HMAC family for a secret, the asymmetric family for a key set", () => {
    const secret = Result.getOrThrow(resolveJwtConfig({ key: { secret: SECRET } }))
    expect(secret.clockToleranceSeconds).toBe(5)
    expect(secret.algorithms).toEqual(["HS256", "HS384", "HS512"])
    const remote = Result.getOrThrow(resolveJwtConfig({ key: { jwksUrl: "http://127.0.0.1:1/jwks" } }))
    expect(remote.algorithms).toContain("ES256")
    expect(remote.algorithms).not.toContain("HS256")
    expect(remote.key).toMatchObject({
      _tag: "RemoteJwks",
      cooldownMs: 30_000,
      cacheMaxAgeMs: 600_000,
      timeoutMs: 5_000
    })
  })

  it("http is allowed for loopback hosts only", () => {
    for (const url of ["http://localhost:8080/jwks", "http://127.0.0.1/jwks", "http://[::1]:9/jwks"]) {
      expect(Result.isSuccess(resolveJwtConfig({ key: { jwksUrl: url } }))).toBe(true)
    }
    for (const url of ["http://127.0.0.1.nip.io/jwks", "ftp://idp.example/jwks", "file:///etc/jwks.json"]) {
      expect(Result.isFailure(resolveJwtConfig({ key: { jwksUrl: url } }))).toBe(true)
    }
  })

  it("refuses empty lists, an empty key set and bad timings", () => {
    const refused: ReadonlyArray<JwtAuthConfig> = [
      { key: { secret: SECRET }, issuer: [] },
      { key: { secret: SECRET }, audience: "" },
      { key: { secret: SECRET }, algorithms: [] },
      { key: { secret: SECRET }, clockToleranceSeconds: 1.5 },
      { key: { secret: SECRET }, client: { claim: "" } },
      { key: { secret: SECRET }, client: { claim: "client_id", scope: "" } },
      { key: { jwks: { keys: [] } } },
      { key: { jwksUrl: "https://idp.example/jwks", cooldownMs: -1 } },
      { key: { jwksUrl: "https://idp.example/jwks", timeoutMs: Number.NaN } }
    ]
    for (const config of refused) expect(Result.isFailure(resolveJwtConfig(config))).toBe(true)
  })
})
