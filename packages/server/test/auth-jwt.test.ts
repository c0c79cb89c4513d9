import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"
import { SignJWT, type JWTPayload } from "jose"
import { ConfigError, createLogger, defaultConfig, parseConfig, startAccord, type AccordConfig } from "../src/index.js"
import {
  bearer,
  buildServer,
  CLIENT_TOKEN,
  makeTempDir,
  spawnCli,
  stopped,
  testSeed,
  USER_TOKEN
} from "./cli-helpers.js"
import { adminQuery, databaseUrl, dropSchema, freshSchema, skipReason } from "./postgres-helpers.js"

const SECRET = "server-jwt-test-secret-0d6f2b9e41a7c3"
const ISSUER = "https://login.example.test"
const AUDIENCE = "accord-api"
/** The JWT settings every run here uses: HMAC, and client tokens marked by scope (id in `client_id`). */
const jwtEnv = { JWT_SECRET: SECRET, JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE, JWT_CLIENT_SCOPE: "accord:client" }

const sign = (claims: JWTPayload, expiresIn: string | number = "10m", secret = SECRET) =>
  new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256" })
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(expiresIn)
    .sign(new TextEncoder().encode(secret))

/** The same token with another payload spliced in: the signature no longer matches. */
const tamper = (token: string, claims: JWTPayload) => {
  const [header, , signature] = token.split(".")
  return `${header}.${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${signature}`
}

const configError = (argv: ReadonlyArray<string>, env: Record<string, string>): ConfigError => {
  try {
    parseConfig(argv, env)
  } catch (error) {
    if (error instanceof ConfigError) return error
    throw error
  }
  throw new Error("expected a ConfigError")
}

describe("parseConfig with --auth", () => {
  it("defaults to the store's tokens and ignores JWT variables then", () => {
    const parsed = parseConfig([], { JWT_SECRET: "short" })
    expect(parsed._tag === "Run" && parsed.config.auth).toBe("store")
    expect(parsed._tag === "Run" && parsed.config.jwt).toBeUndefined()
  })

  it("reads the JWT settings from the environment, flag or AUTH, and keeps the secret redacted", () => {
    for (const [argv, env] of [
      [["--auth", "jwt"], jwtEnv],
      [[], { ...jwtEnv, AUTH: "jwt" }]
    ] as const) {
      const parsed = parseConfig(argv, env)
      if (parsed._tag !== "Run") throw new Error("expected a config")
      expect(parsed.config.auth).toBe("jwt")
      expect(parsed.config.jwt).toMatchObject({
        issuer: ISSUER,
        audience: AUDIENCE,
        client: { claim: "client_id", scope: "accord:client" }
      })
      expect(JSON.stringify(parsed.config)).not.toContain(SECRET)
      const key = parsed.config.jwt?.key
      expect(key !== undefined && "secret" in key && Redacted.isRedacted(key.secret)).toBe(true)
    }
  })

  it.each([
    ["no key", { JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE }, "needs JWT_SECRET (HMAC) or JWKS_URL"],
    [
      "a secret and a JWKS URL",
      { ...jwtEnv, JWKS_URL: "https://login.example.test/jwks.json" },
      "set either JWT_SECRET or JWKS_URL, not both"
    ],
    ["no issuer", { JWT_SECRET: SECRET, JWT_AUDIENCE: AUDIENCE }, "JWT_ISSUER is required"],
    ["no audience", { JWT_SECRET: SECRET, JWT_ISSUER: ISSUER }, "JWT_AUDIENCE is required"],
    [
      "a short secret",
      { ...jwtEnv, JWT_SECRET: "too-short-secret-7c1" },
      "JWT_SECRET: the JWT secret must be at least 32 bytes (it has 20)"
    ],
    [
      "an RSA algorithm with a secret",
      { ...jwtEnv, JWT_ALGORITHMS: "RS256" },
      "JWT_ALGORITHMS: JWT algorithm(s) RS256 cannot be used with a secret"
    ],
    [
      "a bad clock tolerance",
      { ...jwtEnv, JWT_CLOCK_TOLERANCE_S: "soon" },
      "JWT_CLOCK_TOLERANCE_S must be a whole number of seconds"
    ],
    [
      "a plain-http JWKS URL",
      { JWKS_URL: "http://login.example.test/jwks.json", JWT_ISSUER: ISSUER, JWT_AUDIENCE: AUDIENCE },
      "JWKS_URL: the JWKS URL must use https"
    ]
  ])("refuses --auth jwt with %s, naming the problem and never the secret", (_label, env, message) => {
    const error = configError(["--auth", "jwt"], env)
    expect(error.exitCode).toBe(2)
    expect(error.message).toContain("--auth (AUTH) jwt: ")
    expect(error.message).toContain(message)
    for (const secret of [SECRET, "too-short-secret-7c1"]) expect(error.message).not.toContain(secret)
  })

  it("refuses an unknown authenticator", () => {
    expect(configError(["--auth", "ldap"], {}).message).toContain('--auth (AUTH) must be one of store, jwt, got "ldap"')
  })
})

const api = (url: string) => `${url}/api`

/** The cases every --auth jwt run must answer the same way, over HTTP. */
const checkJwtAnswers = async (url: string) => {
  const userToken = await sign({ sub: "u_1" })
  const clientToken = await sign({ sub: "web", client_id: "web", scope: "accord:client" })

  // A user token: the seeded payment methods load for its `sub`.
  const list = await fetch(`${api(url)}/payments/v1/payment-methods/`, { headers: bearer(userToken) })
  expect(list.status).toBe(200)
  expect(((await list.json()) as { data: Array<{ id: string }> }).data.map((method) => method.id)).toEqual([
    "pm_1",
    "pm_2"
  ])

  // A client token: fine for public plan entries, 403 on a user route.
  const plan = await fetch(`${api(url)}/plans/v1/subscription-plans/public/`, {
    method: "POST",
    headers: { ...bearer(clientToken), "content-type": "application/json" },
    body: JSON.stringify({ email: "jwt@example.org", password: "a-long-password-1" })
  })
  expect(plan.status).toBe(201)
  const forbidden = await fetch(`${api(url)}/users/v1/preferences/language/`, { headers: bearer(clientToken) })
  expect(forbidden.status).toBe(403)
  expect(await forbidden.json()).toMatchObject({ code: "insufficient_scope" })

  const refused = {
    tampered: tamper(userToken, { sub: "u_2", iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 600 }),
    expired: await sign({ sub: "u_1" }, Math.floor(Date.now() / 1000) - 60),
    "signed with another secret": await sign({ sub: "u_1" }, "10m", "another-secret-of-at-least-32-bytes!"),
    // The seed's tokens no longer authenticate: the JWT authenticator replaced the store's token table.
    "a seed token": USER_TOKEN
  }
  for (const [what, token] of Object.entries(refused)) {
    const response = await fetch(`${api(url)}/payments/v1/payment-methods/`, { headers: bearer(token) })
    expect(response.status, what).toBe(401)
    expect(response.headers.get("www-authenticate"), what).toBe('Bearer realm="api", error="invalid_token"')
    expect(await response.json(), what).toMatchObject({ code: "invalid_token" })
  }
  return [userToken, clientToken]
}

let temp: Awaited<ReturnType<typeof makeTempDir>>
let seedFile = ""
beforeAll(async () => {
  buildServer()
  temp = await makeTempDir()
  seedFile = await temp.write("seed.json", testSeed)
}, 120_000)
afterAll(() => temp.cleanup())

describe("--auth jwt", () => {
  it("in process (koa): users by `sub`, clients by scope, every bad token 401 invalid_token", async () => {
    const parsed = parseConfig(["--auth", "jwt", "--adapter", "koa", "--port", "0", "--seed", seedFile], {
      ...jwtEnv,
      SCRYPT_N: "1024",
      SCRYPT_P: "1"
    })
    if (parsed._tag !== "Run") throw new Error("expected a config")
    const config: AccordConfig = parsed.config
    const lines: Array<string> = []
    const accord = await startAccord(config, {
      logger: createLogger("info", { write: (line: string) => void lines.push(line) })
    })
    try {
      await checkJwtAnswers(accord.url)
    } finally {
      await accord.close()
    }
    expect(lines.join("")).not.toContain(SECRET)
  })

  it("as a process (fastify): the same answers, and neither the secret nor a token in the logs", async () => {
    const cli = spawnCli(["--auth", "jwt", "--port", "0", "--seed", seedFile], jwtEnv)
    const url = await cli.listening
    const tokens = await checkJwtAnswers(url)
    expect(await stopped(cli)).toEqual({ code: 0, signal: null })
    expect(cli.logLines().find((line) => line["msg"] === "listening")).toMatchObject({ auth: "jwt" })
    for (const secret of [SECRET, USER_TOKEN, CLIENT_TOKEN, ...tokens]) expect(cli.stderr()).not.toContain(secret)
  })

  it.each([
    [
      "a short secret",
      { ...jwtEnv, JWT_SECRET: "short-but-secret-9f3e" },
      "JWT_SECRET: the JWT secret must be at least 32 bytes"
    ],
    [
      "a secret and a JWKS URL",
      { ...jwtEnv, JWKS_URL: "https://login.example.test/jwks.json" },
      "set either JWT_SECRET or JWKS_URL, not both"
    ],
    ["no audience", { JWT_SECRET: SECRET, JWT_ISSUER: ISSUER }, "JWT_AUDIENCE is required"]
  ])("exits 2 on %s without printing the secret", async (_label, env, message) => {
    const cli = spawnCli(["--auth", "jwt", "--port", "0"], env)
    expect(await cli.exited).toEqual({ code: 2, signal: null })
    expect(cli.stderr()).toContain(`accord: --auth (AUTH) jwt: `)
    expect(cli.stderr()).toContain(message)
    expect(cli.stdout()).toBe("")
    expect(cli.stderr()).not.toContain(env.JWT_SECRET)
  })
})

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? `--auth jwt on PostgreSQL: subjects a store cannot keep (${skipReason})`
    : "--auth jwt on PostgreSQL: subjects a store cannot keep",
  () => {
    it("a sub with NUL, a control character or a lone surrogate is 401 invalid_token, never 500 or a merged user", async () => {
      const schema = freshSchema()
      const accord = await startAccord(
        {
          ...defaultConfig,
          auth: "jwt",
          jwt: {
            key: { secret: Redacted.make(SECRET) },
            issuer: ISSUER,
            audience: AUDIENCE,
            client: { claim: "client_id", scope: "accord:client" }
          },
          adapter: "fastify",
          port: 0,
          store: "postgres",
          databaseUrl: Redacted.make(databaseUrl ?? ""),
          databaseSchema: schema,
          scrypt: { N: 1024, r: 8, p: 1 }
        },
        { logger: createLogger("warn", { write: () => undefined }) }
      )
      try {
        const put = async (sub: string) =>
          fetch(`${api(accord.url)}/users/v1/preferences/language/`, {
            method: "PUT",
            headers: { ...bearer(await sign({ sub })), "content-type": "application/json" },
            body: '{"timezone":60}'
          })
        for (const sub of ["u\u0000nul", "u\u0007bel", "u\ud800", "u\udfff"]) {
          const answer = await put(sub)
          expect(answer.status, JSON.stringify(sub)).toBe(401)
          expect(((await answer.json()) as { code: string }).code).toBe("invalid_token")
        }
        const stored = await adminQuery(databaseUrl ?? "", `SELECT user_id FROM "${schema}".preferences`)
        expect(stored.rows).toEqual([])
        expect((await put("u\ud83d\ude00")).status).toBe(200)
      } finally {
        await accord.close()
        await dropSchema(databaseUrl ?? "", schema)
      }
    })
  }
)
