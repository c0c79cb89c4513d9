import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, beforeEach, describe, expect, it, vi } from "@effect/vitest"
import { type Authenticator, isWellFormedToken } from "@accord/domain"
import { Effect, Result } from "effect"
import { exportJWK, generateKeyPair, type CryptoKey, type JWK } from "jose"
import { MAX_JWKS_BYTES, type JwtAuthConfig } from "@accord/auth-jwt"
import { AUDIENCE, buildAuthenticator, describeOutcome, forge, ISSUER, NOW, outcomeOf, sign } from "./helpers.js"

interface TestKey {
  readonly kid: string
  readonly alg: string
  readonly privateKey: CryptoKey
  readonly jwk: JWK
}

const makeKey = async (alg: "ES256" | "RS256", kid: string): Promise<TestKey> => {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true })
  return { kid, alg, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg, use: "sig" } }
}

const signWith = (key: TestKey, claims: Readonly<Record<string, unknown>> = {}, withKid = true) =>
  sign(key.privateKey, { alg: key.alg, claims, ...(withKid && { kid: key.kid }) })

/** A JWKS endpoint on 127.0.0.1 whose answer a test changes while the authenticator runs. */
const startIdentityProvider = async () => {
  let answer: { status: number; body: string } | "hang" = { status: 200, body: JSON.stringify({ keys: [] }) }
  let fetches = 0
  const server: Server = createServer((_request, response) => {
    fetches++
    if (answer === "hang") return
    response.writeHead(answer.status, { "content-type": "application/json" }).end(answer.body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/.well-known/jwks.json`,
    publish: (...keys: ReadonlyArray<TestKey>) => {
      answer = { status: 200, body: JSON.stringify({ keys: keys.map((key) => key.jwk) }) }
    },
    answer: (status: number, body: string) => {
      answer = { status, body }
    },
    hang: () => {
      answer = "hang"
    },
    fetches: () => fetches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

type IdentityProvider = Awaited<ReturnType<typeof startIdentityProvider>>

const COOLDOWN_MS = 1_000
const CACHE_MAX_AGE_MS = 60_000

const remoteConfig = (idp: IdentityProvider, overrides: Partial<JwtAuthConfig> = {}): JwtAuthConfig => ({
  key: {
    jwksUrl: idp.url,
    cooldownMs: COOLDOWN_MS,
    cacheMaxAgeMs: CACHE_MAX_AGE_MS,
    timeoutMs: 1_000,
    retryAfterSeconds: 7
  },
  issuer: ISSUER,
  audience: AUDIENCE,
  ...overrides
})

const check = async (authenticator: Authenticator["Service"], token: string) =>
  describeOutcome(await Effect.runPromise(Effect.result(authenticator.authenticate(token))))

// jose times its key-set cache and cooldown with Date.now(); faking Date alone moves that time (and Effect's live
// Clock) without sleeping, while real timers keep the HTTP exchange working.
let nowMs = NOW * 1000
const advance = (ms: number) => {
  nowMs += ms
  vi.setSystemTime(nowMs)
}

let es1: TestKey
let es2: TestKey
let rs1: TestKey
let idp: IdentityProvider

beforeEach(async () => {
  vi.useFakeTimers({ toFake: ["Date"] })
  nowMs = NOW * 1000
  vi.setSystemTime(nowMs)
  ;[es1, es2, rs1] = await Promise.all([makeKey("ES256", "es-1"), makeKey("ES256", "es-2"), makeKey("RS256", "rs-1")])
  idp = await startIdentityProvider()
})

afterEach(async () => {
  vi.useRealTimers()
  await idp.close()
})

describe("remote JWKS: verification", () => {
  it("ES256 and RS256 tokens signed with published keys verify; the set is fetched once and cached", async () => {
    idp.publish(es1, rs1)
    const authenticator = await buildAuthenticator(remoteConfig(idp))
    expect(await check(authenticator, await signWith(es1))).toBe("user:u_1")
    expect(await check(authenticator, await signWith(rs1, { sub: "u_2" }))).toBe("user:u_2")
    expect(await check(authenticator, await signWith(es1, { sub: "u_3" }))).toBe("user:u_3")
    expect(idp.fetches()).toBe(1)
  })

  it("a token with a published kid but a bad signature, or signed by an unpublished key, is invalid_token", async () => {
    idp.publish(es1)
    const authenticator = await buildAuthenticator(remoteConfig(idp))
    const impostor = { ...es2, kid: es1.kid }
    expect(await check(authenticator, await signWith(impostor))).toBe("invalid_token")
    advance(COOLDOWN_MS + 1)
    expect(await check(authenticator, await signWith(es2))).toBe("invalid_token")
  })

  it("tokens without kid: one matching key verifies; with several (rotation overlap) each is tried", async () => {
    idp.publish(es1)
    const single = await buildAuthenticator(remoteConfig(idp))
    expect(await check(single, await signWith(es1, {}, false))).toBe("user:u_1")
    idp.publish(es1, es2)
    const overlap = await buildAuthenticator(remoteConfig(idp))
    expect(await check(overlap, await signWith(es2, {}, false))).toBe("user:u_1")
    expect(await check(overlap, await signWith(es1, {}, false))).toBe("user:u_1")
    const stranger = await makeKey("ES256", "stranger")
    expect(await check(overlap, await signWith(stranger, {}, false))).toBe("invalid_token")
  })

  it("claims are checked as with a secret: wrong aud, wrong iss, expired, missing sub", async () => {
    idp.publish(es1)
    const authenticator = await buildAuthenticator(remoteConfig(idp))
    for (const claims of [{ aud: "other" }, { iss: "https://evil.example" }, { exp: NOW - 60 }, { sub: undefined }]) {
      expect(await check(authenticator, await signWith(es1, claims))).toBe("invalid_token")
    }
  })

  it("algorithms: HMAC is never accepted with a key set; a narrowed list refuses the rest", async () => {
    idp.publish(es1, rs1)
    const authenticator = await buildAuthenticator(remoteConfig(idp))
    // Algorithm confusion: an HS256 token "signed" with the public key as the HMAC secret.
    const confused = await sign(new TextEncoder().encode(JSON.stringify(rs1.jwk)), { alg: "HS256", kid: rs1.kid })
    expect(await check(authenticator, confused)).toBe("invalid_token")
    expect(
      await check(authenticator, forge({ alg: "none" }, { iss: ISSUER, aud: AUDIENCE, sub: "u_1", exp: NOW + 60 }, ""))
    ).toBe("invalid_token")
    const esOnly = await buildAuthenticator(remoteConfig(idp, { algorithms: ["ES256"] }))
    expect(await check(esOnly, await signWith(es1))).toBe("user:u_1")
    expect(await check(esOnly, await signWith(rs1))).toBe("invalid_token")
  })

  it("the core's 512-character token grammar: a small claim set fits with ES256, not with RS256 (2048-bit)", async () => {
    const claims = { jti: "0f8fad5b-d9cb-469f-a165-70867728950e", scope: "openid accord:client", client_id: "web-app" }
    const es = await signWith(es1, claims)
    const rs = await signWith(rs1, claims)
    expect(isWellFormedToken(es)).toBe(true)
    // A 2048-bit RSA signature alone is 342 base64url characters, which leaves 168 for header and claims.
    expect(rs.split(".")[2]).toHaveLength(342)
    expect(rs.length).toBeGreaterThan(512)
    expect(isWellFormedToken(rs)).toBe(false)
  })
})

describe("remote JWKS: key rotation", () => {
  it("the provider switches to key 2: key 2 verifies after the cooldown's refetch; key 1 is then refused", async () => {
    idp.publish(es1)
    const authenticator = await buildAuthenticator(remoteConfig(idp))
    const token1 = await signWith(es1)
    const token2 = await signWith(es2, { sub: "u_2" })
    expect(await check(authenticator, token1)).toBe("user:u_1")
    expect(idp.fetches()).toBe(1)

    idp.publish(es2)
    // Within the cooldown an unknown kid does not refetch: it is refused from the cached set.
    expect(await check(authenticator, token2)).toBe("invalid_token")
    expect(idp.fetches()).toBe(1)

    advance(COOLDOWN_MS + 1)
    expect(await check(authenticator, token2)).toBe("user:u_2")
    expect(idp.fetches()).toBe(2)

    // The set now lacks key 1: its tokens are refused (the provider's set is the authority).
    expect(await check(authenticator, token1)).toBe("invalid_token")
    advance(COOLDOWN_MS + 1)
    expect(await check(authenticator, token1)).toBe("invalid_token")
    expect(idp.fetches()).toBe(3)
  })

  it("a rotation that publishes both keys keeps key 1 valid; once it is withdrawn, key 1 lasts until the cache expires", async () => {
    idp.publish(es1)
    const authenticator = await buildAuthenticator(remoteConfig(idp))
    const token1 = await signWith(es1)
    expect(await check(authenticator, token1)).toBe("user:u_1")

    idp.publish(es1, es2)
    advance(COOLDOWN_MS + 1)
    expect(await check(authenticator, await signWith(es2, { sub: "u_2" }))).toBe("user:u_2")
    expect(await check(authenticator, token1)).toBe("user:u_1")

    idp.publish(es2)
    const fetchesBefore = idp.fetches()
    advance(CACHE_MAX_AGE_MS - COOLDOWN_MS)
    expect(await check(authenticator, token1)).toBe("user:u_1")
    expect(idp.fetches()).toBe(fetchesBefore)
    advance(COOLDOWN_MS + 1)
    expect(await check(authenticator, token1)).toBe("invalid_token")
    expect(idp.fetches()).toBe(fetchesBefore + 1)
  })

  it("tokens with made-up kids trigger at most one fetch per cooldown", async () => {
    idp.publish(es1)
    const authenticator = await buildAuthenticator(remoteConfig(idp))
    expect(await check(authenticator, await signWith(es1))).toBe("user:u_1")
    for (let index = 0; index < 20; index++) {
      expect(await check(authenticator, await signWith({ ...es2, kid: `made-up-${index}` }))).toBe("invalid_token")
    }
    expect(idp.fetches()).toBe(1)
    advance(COOLDOWN_MS + 1)
    for (let index = 0; index < 20; index++) {
      expect(await check(authenticator, await signWith({ ...es2, kid: `made-up-${index}` }))).toBe("invalid_token")
    }
    expect(idp.fetches()).toBe(2)
  })
})

describe("remote JWKS: the identity provider cannot be reached", () => {
  const unavailable = "unavailable:identity_provider_unreachable"

  it("connection refused: Unavailable identity_provider_unreachable with the configured Retry-After", async () => {
    const config = remoteConfig(idp)
    await idp.close()
    const authenticator = await buildAuthenticator(config)
    const outcome = await Effect.runPromise(Effect.result(authenticator.authenticate(await signWith(es1))))
    expect(describeOutcome(outcome)).toBe(unavailable)
    expect(
      Result.isFailure(outcome) && outcome.failure._tag === "Unavailable" && outcome.failure.retryAfterSeconds
    ).toBe(7)
  })

  it("a non-200 answer, a body that is not JSON, JSON that is not a key set: Unavailable", async () => {
    const authenticator = await buildAuthenticator(remoteConfig(idp))
    const token = await signWith(es1)
    for (const [status, body] of [
      [500, "{}"],
      [302, ""],
      [200, "<html>maintenance</html>"],
      [200, JSON.stringify({ keys: "none" })]
    ] as const) {
      idp.answer(status, body)
      expect(await check(authenticator, token)).toBe(unavailable)
    }
    idp.publish(es1)
    expect(await check(authenticator, token)).toBe("user:u_1")
  })

  it("no answer within the timeout: Unavailable", async () => {
    idp.hang()
    const authenticator = await buildAuthenticator({
      ...remoteConfig(idp),
      key: { jwksUrl: idp.url, timeoutMs: 100, cooldownMs: COOLDOWN_MS, cacheMaxAgeMs: CACHE_MAX_AGE_MS }
    })
    expect(await check(authenticator, await signWith(es1))).toBe(unavailable)
  })

  it("after a good fetch: cached keys keep working until the cache expires, then Unavailable until the provider is back", async () => {
    idp.publish(es1)
    const authenticator = await buildAuthenticator(remoteConfig(idp))
    const token = await signWith(es1)
    expect(await check(authenticator, token)).toBe("user:u_1")
    idp.answer(503, "{}")
    advance(COOLDOWN_MS + 1)
    expect(await check(authenticator, token)).toBe("user:u_1")
    // An unknown kid past the cooldown asks the provider, which fails: that is an outage, not a bad token.
    expect(await check(authenticator, await signWith(es2))).toBe(unavailable)
    advance(CACHE_MAX_AGE_MS)
    expect(await check(authenticator, token)).toBe(unavailable)
    idp.publish(es1)
    expect(await check(authenticator, token)).toBe("user:u_1")
  })
})

describe("remote JWKS: a key set is read up to a bound", () => {
  const unavailable = "unavailable:identity_provider_unreachable"
  const CHUNK = Buffer.alloc(64 * 1024, 0x20)

  /** A provider that streams whitespace after an opening brace, with or without a declared length, counting what it wrote. */
  const startFloodingProvider = async (declareLength: boolean) => {
    let written = 0
    const server: Server = createServer((_request, response) => {
      const total = 200 * 1024 * 1024
      response.writeHead(200, {
        "content-type": "application/json",
        ...(declareLength && { "content-length": String(total) })
      })
      const pump = () => {
        while (written < total && !response.destroyed) {
          written += CHUNK.length
          if (!response.write(CHUNK)) return void response.once("drain", pump)
        }
        response.end()
      }
      response.write("{")
      pump()
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const { port } = server.address() as AddressInfo
    return {
      url: `http://127.0.0.1:${port}/jwks.json`,
      written: () => written,
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections()
          server.close(() => resolve())
        })
    }
  }

  it.each([
    ["declared with Content-Length", true],
    ["streamed without a length", false]
  ])("a 200 MiB key set %s: Unavailable, and at most a few MiB are read", async (_label, declareLength) => {
    const flood = await startFloodingProvider(declareLength)
    try {
      const authenticator = await buildAuthenticator({
        ...remoteConfig(idp),
        key: { jwksUrl: flood.url, timeoutMs: 5_000, cooldownMs: COOLDOWN_MS, cacheMaxAgeMs: CACHE_MAX_AGE_MS }
      })
      expect(await check(authenticator, await signWith(es1))).toBe(unavailable)
      // What the provider managed to write before the cut: the bound plus socket buffers, never the whole body.
      expect(flood.written()).toBeLessThan(16 * 1024 * 1024)
    } finally {
      await flood.close()
    }
  })

  it(`a key set just under ${MAX_JWKS_BYTES} bytes is read and verifies`, async () => {
    const keySet = JSON.stringify({ keys: [es1.jwk] })
    idp.answer(200, keySet.slice(0, -1) + " ".repeat(MAX_JWKS_BYTES - keySet.length - 1) + "}")
    const authenticator = await buildAuthenticator(remoteConfig(idp))
    expect(await check(authenticator, await signWith(es1))).toBe("user:u_1")
  })
})

describe("local JWKS", () => {
  it("verifies against a key set held in memory, without any fetch", async () => {
    const config: JwtAuthConfig = { key: { jwks: { keys: [es1.jwk, rs1.jwk] } }, issuer: ISSUER, audience: AUDIENCE }
    const outcomes = await Effect.runPromise(
      Effect.all([
        outcomeOf(config, await signWith(es1)),
        outcomeOf(config, await signWith(rs1, { sub: "u_2" })),
        outcomeOf(config, await signWith(es2))
      ])
    )
    expect(outcomes).toEqual(["user:u_1", "user:u_2", "invalid_token"])
    expect(idp.fetches()).toBe(0)
  })
})
