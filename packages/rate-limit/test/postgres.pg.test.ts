import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import pg from "pg"
import {
  makePostgresRateLimiter,
  RATE_LIMIT_TABLE,
  RateLimitStoreTimeout,
  type ClosableRateLimiter,
  type PostgresRateLimiterOptions
} from "@accord/rate-limit"
import { answers, databaseUrl, skipReason, startBlackHole, startSwitchableProxy, uniqueName } from "./helpers.js"

const skip = skipReason("DATABASE_URL", databaseUrl, await answers(databaseUrl, 5432))
const url = databaseUrl ?? ""

const adminQuery = async (text: string): Promise<pg.QueryResult> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await client.query(text)
  } finally {
    await client.end()
  }
}

/** The same database at another address (a proxy, a black hole): the URL with its host and port replaced. */
const at = (host: string, port: number): string => {
  const moved = new URL(url)
  moved.hostname = host
  moved.port = String(port)
  return moved.toString()
}

describe.skipIf(skip !== undefined)(
  skip === undefined ? "makePostgresRateLimiter" : `makePostgresRateLimiter (${skip})`,
  () => {
    const schema = uniqueName("accord_rl")
    const opened: Array<ClosableRateLimiter> = []
    const make = async (options: Partial<PostgresRateLimiterOptions> = {}) => {
      const limiter = await makePostgresRateLimiter({
        capacity: 5,
        refillPerSecond: 1,
        connectionString: url,
        schema,
        ...options
      })
      opened.push(limiter)
      return limiter
    }

    beforeAll(async () => {
      await adminQuery(`CREATE SCHEMA "${schema}"`)
    })
    afterAll(async () => {
      await Promise.all(opened.map((limiter) => limiter.close()))
      await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    })

    it("two limiters, as two processes would have, create the table once and share one allowance", async () => {
      const [first, second] = await Promise.all([make(), make()])
      const answers: Array<number> = []
      for (let index = 0; index < 8; index++) answers.push(await (index % 2 === 0 ? first : second).consume("user:u_1"))
      expect(answers.slice(0, 5)).toEqual([0, 0, 0, 0, 0])
      // Refused with the seconds left of the 5 s window that started with the first request.
      expect(Math.min(...answers.slice(5))).toBeGreaterThanOrEqual(4)
      expect(Math.max(...answers.slice(5))).toBeLessThanOrEqual(5)
      expect(await second.consume("user:u_2")).toBe(0)
      const rows = await adminQuery(`SELECT key, points FROM "${schema}".${RATE_LIMIT_TABLE} ORDER BY key`)
      expect(rows.rows).toEqual([
        { key: "accord:rate-limit:user:u_1", points: 8 },
        { key: "accord:rate-limit:user:u_2", points: 1 }
      ])
    })

    it("keeps a key longer than its column as the key's digest, still counted", async () => {
      const limiter = await make({ capacity: 1 })
      const key = `user:${"x".repeat(400)}`
      expect([await limiter.consume(key), await limiter.consume(key)]).toEqual([0, 1])
      const rows = await adminQuery(`SELECT key FROM "${schema}".${RATE_LIMIT_TABLE} WHERE key LIKE '%sha256:%'`)
      expect(rows.rows).toEqual([{ key: expect.stringMatching(/^accord:rate-limit:sha256:[0-9a-f]{64}$/) }])
    })

    it("refuses to start, having closed its pool, when it cannot create its table", async () => {
      await expect(
        makePostgresRateLimiter({ capacity: 1, refillPerSecond: 1, connectionString: at("127.0.0.1", 1) })
      ).rejects.toThrow(/ECONNREFUSED/)
    })

    it("fails open when the database is unreachable: the request is served, onError told, nothing rejects", async () => {
      const errors: Array<unknown> = []
      const limiter = await make({
        connectionString: at("127.0.0.1", 1),
        createTable: false,
        pauseAfterErrorMs: 0,
        onError: (error) => errors.push(error)
      })
      for (let index = 0; index < 7; index++) expect(await limiter.consume("user:u_1")).toBe(0)
      expect(errors).toHaveLength(7)
      expect(String(errors[0])).toMatch(/ECONNREFUSED/)
    })

    it("fails open within its timeout when the database accepts connections and never answers", async () => {
      const blackHole = await startBlackHole()
      const errors: Array<unknown> = []
      const limiter = await make({
        connectionString: at(blackHole.host, blackHole.port),
        createTable: false,
        timeoutMs: 200,
        onError: (error) => errors.push(error)
      })
      const started = performance.now()
      expect(await limiter.consume("user:u_1")).toBe(0)
      expect(performance.now() - started).toBeLessThan(1500)
      expect(errors).toEqual([expect.any(RateLimitStoreTimeout)])
      await blackHole.close()
    })

    it("fails open within its timeout when the database goes silent after answering", async () => {
      const proxy = await startSwitchableProxy(url, 5432)
      const errors: Array<unknown> = []
      const limiter = await make({
        connectionString: at(proxy.host, proxy.port),
        capacity: 1,
        timeoutMs: 300,
        onError: (error) => errors.push(error)
      })
      expect([await limiter.consume("user:silent"), await limiter.consume("user:silent")]).toEqual([0, 1])
      proxy.blackHole()
      const started = performance.now()
      expect(await limiter.consume("user:silent")).toBe(0)
      expect(performance.now() - started).toBeLessThan(1500)
      expect(errors).toEqual([expect.any(RateLimitStoreTimeout)])
      await proxy.close()
    })
  }
)
