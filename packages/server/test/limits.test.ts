import { exchange } from "@accord/conformance"
import { describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"
import { ConfigError, defaultConfig, parseConfig, type AccordConfig } from "../src/config.js"
import {
  bearer,
  CLIENT_TOKEN,
  OTHER_USER_TOKEN,
  spawnCli,
  stopped,
  USER_TOKEN,
  useBuiltServerAndSeed
} from "./cli-helpers.js"

const run = (argv: ReadonlyArray<string>, env: Record<string, string | undefined> = {}): AccordConfig => {
  const parsed = parseConfig(argv, env)
  if (parsed._tag !== "Run") throw new Error("expected a run configuration")
  return parsed.config
}
const refusal = (argv: ReadonlyArray<string>, env: Record<string, string | undefined> = {}): string => {
  try {
    parseConfig(argv, env)
  } catch (error) {
    if (error instanceof ConfigError) return error.message
    throw error
  }
  throw new Error("expected a ConfigError")
}

describe("limit options", () => {
  it("defaults: 16 KiB headers, 2048-character paths, 30 s / 10 s timeouts, no rate limit, 4 hashes at once and 64 waiting", () => {
    const config = run([])
    expect(config).toMatchObject({
      bodyLimit: 16_384,
      maxHeaderSize: 16_384,
      maxPathLength: 2048,
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      hashing: { maxConcurrent: 4, maxQueued: 64 }
    })
    expect(config.rateLimit).toBeUndefined()
    expect(config).toEqual(defaultConfig)
  })

  it("reads flags and their environment variables (a flag wins)", () => {
    const flags = [
      "--max-header-size",
      "4096",
      "--max-path-length",
      "100",
      "--request-timeout-ms",
      "500",
      "--headers-timeout-ms",
      "200",
      "--rate-limit-capacity",
      "5",
      "--rate-limit-refill-per-second",
      "0.5"
    ]
    expect(run(flags, { MAX_HEADER_SIZE: "9999", SCRYPT_MAX_CONCURRENT: "1", SCRYPT_MAX_QUEUED: "0" })).toMatchObject({
      maxHeaderSize: 4096,
      maxPathLength: 100,
      requestTimeoutMs: 500,
      headersTimeoutMs: 200,
      rateLimit: { capacity: 5, refillPerSecond: 0.5, store: "memory" },
      hashing: { maxConcurrent: 1, maxQueued: 0 }
    })
    expect(
      run([], {
        MAX_HEADER_SIZE: "8192",
        MAX_PATH_LENGTH: "512",
        REQUEST_TIMEOUT_MS: "0",
        HEADERS_TIMEOUT_MS: "0",
        RATE_LIMIT_CAPACITY: "10",
        RATE_LIMIT_REFILL_PER_SECOND: "2"
      })
    ).toMatchObject({
      maxHeaderSize: 8192,
      maxPathLength: 512,
      requestTimeoutMs: 0,
      headersTimeoutMs: 0,
      rateLimit: { capacity: 10, refillPerSecond: 2, store: "memory" }
    })
  })

  it("keeps the rate limit where --rate-limit-store says: memory by default, the store's database, or Redis", () => {
    const limit = ["--rate-limit-capacity", "5", "--rate-limit-refill-per-second", "1"]
    const postgres = ["--store", "postgres", "--database-url", "postgres://postgres@127.0.0.1:5432/test"]
    expect(run([...limit, ...postgres, "--rate-limit-store", "postgres"]).rateLimit).toEqual({
      capacity: 5,
      refillPerSecond: 1,
      store: "postgres"
    })
    const redis = run(limit, { RATE_LIMIT_STORE: "redis", REDIS_URL: "rediss://:s3cret-pw@cache.internal:6380/2" })
    expect(redis.rateLimit).toEqual({ capacity: 5, refillPerSecond: 1, store: "redis" })
    expect(redis.redisUrl && Redacted.value(redis.redisUrl)).toBe("rediss://:s3cret-pw@cache.internal:6380/2")
    expect(JSON.stringify(redis)).not.toContain("s3cret-pw")
    expect(String(redis.redisUrl)).not.toContain("s3cret-pw")
    // REDIS_URL alone (set for something else) changes nothing.
    expect(run([], { REDIS_URL: "redis://127.0.0.1:6379" }).rateLimit).toBeUndefined()
  })

  it("refuses a rate limit store it cannot use, naming the options and never echoing the Redis URL", () => {
    const limit = ["--rate-limit-capacity", "5", "--rate-limit-refill-per-second", "1"]
    expect(refusal([...limit, "--rate-limit-store", "postgres"])).toBe(
      "--rate-limit-store (RATE_LIMIT_STORE) postgres needs --store postgres: the limit is kept in the store's database"
    )
    expect(refusal([...limit, "--rate-limit-store", "redis"])).toBe(
      "--redis-url (REDIS_URL) is required with --rate-limit-store redis"
    )
    expect(refusal(["--rate-limit-store", "redis", "--redis-url", "redis://127.0.0.1:6379"])).toBe(
      "--rate-limit-store (RATE_LIMIT_STORE) needs a rate limit: --rate-limit-capacity (RATE_LIMIT_CAPACITY) and --rate-limit-refill-per-second (RATE_LIMIT_REFILL_PER_SECOND)"
    )
    expect(refusal([...limit, "--rate-limit-store", "mongo"])).toBe(
      '--rate-limit-store (RATE_LIMIT_STORE) must be one of memory, postgres, redis, got "mongo"'
    )
    const badUrl = refusal([...limit, "--rate-limit-store", "redis", "--redis-url", "http://:s3cret-pw@cache:6379"])
    expect(badUrl).toBe("--redis-url (REDIS_URL) must be a redis:// or rediss:// URL")
  })

  it("a request timeout below the default headers timeout caps it; an explicit larger headers timeout is refused", () => {
    expect(run(["--request-timeout-ms", "2000"])).toMatchObject({ requestTimeoutMs: 2000, headersTimeoutMs: 2000 })
    expect(run(["--request-timeout-ms", "0"])).toMatchObject({ requestTimeoutMs: 0, headersTimeoutMs: 10_000 })
    expect(refusal(["--request-timeout-ms", "2000", "--headers-timeout-ms", "3000"])).toBe(
      "--headers-timeout-ms (HEADERS_TIMEOUT_MS) must not exceed --request-timeout-ms (REQUEST_TIMEOUT_MS) (3000 > 2000)"
    )
  })

  it("refuses a rate limit half given, and out-of-range values, naming the option", () => {
    expect(refusal(["--rate-limit-capacity", "5"])).toContain("give both or neither")
    expect(refusal([], { RATE_LIMIT_REFILL_PER_SECOND: "1" })).toContain("give both or neither")
    expect(refusal(["--rate-limit-capacity", "5", "--rate-limit-refill-per-second", "0"])).toBe(
      '--rate-limit-refill-per-second (RATE_LIMIT_REFILL_PER_SECOND) must be a number above 0 and at most 1000000, got "0"'
    )
    expect(refusal(["--max-header-size", "100"])).toBe(
      '--max-header-size (MAX_HEADER_SIZE) must be an integer from 1024 to 1048576, got "100"'
    )
    expect(refusal([], { SCRYPT_MAX_CONCURRENT: "0" })).toBe(
      'SCRYPT_MAX_CONCURRENT must be an integer from 1 to 1024, got "0"'
    )
  })
})

const suite = useBuiltServerAndSeed()

const preferences = "/api/users/v1/preferences/language/"
const planEntries = "/api/plans/v1/subscription-plans/public/"
const statusOf = (wire: string): number => Number(/^HTTP\/1\.1 (\d{3}) /.exec(wire)?.[1])
const codeOf = async (response: Response): Promise<unknown> => ((await response.json()) as { code?: unknown }).code

describe.each(["fastify", "koa", "express", "fetch"] as const)("accord CLI limits with --adapter %s", (adapter) => {
  it("takes every HTTP limit from flags and environment: 431, 414, 413, 408 and 429 problems", async () => {
    const cli = spawnCli(
      [
        "--adapter",
        adapter,
        "--port",
        "0",
        "--seed",
        suite.seedPath,
        "--max-header-size",
        "2048",
        "--max-path-length",
        "64",
        "--body-limit",
        "64"
      ],
      {
        REQUEST_TIMEOUT_MS: "500",
        HEADERS_TIMEOUT_MS: "300",
        RATE_LIMIT_CAPACITY: "2",
        RATE_LIMIT_REFILL_PER_SECOND: "0.2",
        LOG_LEVEL: "warn"
      }
    )
    const url = await cli.listening

    const bigHeaders = await exchange(url, `GET /api/health HTTP/1.1\r\nHost: x\r\nX-Pad: ${"a".repeat(3000)}\r\n\r\n`)
    expect(statusOf(bigHeaders.wire)).toBe(431)
    expect(bigHeaders.wire).toContain('"code":"headers_too_large"')

    const longPath = await fetch(`${url}/api/${"a".repeat(60)}`)
    expect([longPath.status, await codeOf(longPath)]).toEqual([414, "uri_too_long"])

    const stalled = await exchange(
      url,
      `PUT ${preferences} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${OTHER_USER_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 9\r\n\r\n{`,
      5000
    )
    expect(statusOf(stalled.wire)).toBe(408)
    expect(stalled.wire).toContain('"code":"request_timeout"')

    const put = (body: string) =>
      fetch(`${url}${preferences}`, {
        method: "PUT",
        headers: { ...bearer(USER_TOKEN), "content-type": "application/json" },
        body
      })
    const tooLarge = await put(`{"language":"en"${" ".repeat(60)}}`)
    expect([tooLarge.status, await codeOf(tooLarge)]).toEqual([413, "payload_too_large"])
    // The 413 was the first of USER_TOKEN's two requests in its 10 s window (2 / 0.2 per second).
    expect((await put("{}")).status).toBe(200)
    const limited = await put("{}")
    expect([limited.status, await codeOf(limited)]).toEqual([429, "rate_limited"])
    // The window's seconds left, rounded up: 10 unless a second went by since the first request.
    expect(["9", "10"]).toContain(limited.headers.get("retry-after"))

    expect(await stopped(cli)).toEqual({ code: 0, signal: null })
  })

  it("hashing saturated (SCRYPT_MAX_CONCURRENT=1, SCRYPT_MAX_QUEUED=1): a burst of plan entries gets 201s and 503s, never a 500", async () => {
    const cli = spawnCli(["--adapter", adapter, "--port", "0", "--seed", suite.seedPath], {
      // A deliberately slow hash (about a quarter of a second here), so the burst arrives while the first one runs.
      SCRYPT_N: "32768",
      SCRYPT_P: "1",
      SCRYPT_MAX_CONCURRENT: "1",
      SCRYPT_MAX_QUEUED: "1",
      LOG_LEVEL: "warn"
    })
    const url = await cli.listening
    const post = (index: number) =>
      fetch(`${url}${planEntries}`, {
        method: "POST",
        headers: { ...bearer(CLIENT_TOKEN), "content-type": "application/json" },
        body: JSON.stringify({ email: `burst-${index}@example.com`, password: "burst-Passw0rd" })
      })
    const responses = await Promise.all(Array.from({ length: 12 }, (_, index) => post(index)))
    const answers = await Promise.all(
      responses.map(async (response) => ({
        status: response.status,
        retryAfter: response.headers.get("retry-after"),
        contentType: response.headers.get("content-type"),
        body: (await response.json()) as Record<string, unknown>
      }))
    )
    const created = answers.filter((answer) => answer.status === 201)
    const refused = answers.filter((answer) => answer.status === 503)
    expect(created.length + refused.length).toBe(answers.length)
    // One hashing and one waiting when the burst arrives: at least those two are created.
    expect(created.length).toBeGreaterThanOrEqual(2)
    expect(refused.length).toBeGreaterThanOrEqual(1)
    for (const answer of refused) {
      expect(answer.retryAfter).toBe("1")
      expect(answer.contentType).toBe("application/problem+json; charset=utf-8")
      expect(answer.body).toMatchObject({ status: 503, title: "Service Unavailable", code: "unavailable" })
    }
    for (const answer of created) expect(answer.body).toMatchObject({ password: "********" })
    // Once the burst is over, hashing takes requests again.
    expect((await post(99)).status).toBe(201)

    expect(await stopped(cli)).toEqual({ code: 0, signal: null })
    // 503s are logged as warnings; nothing was an error.
    const lines = cli.logLines()
    expect(lines.filter((line) => line["msg"] === "request" && line["status"] === 503)).toHaveLength(refused.length)
    expect(lines.filter((line) => Number(line["level"]) >= 50)).toEqual([])
  })
})
