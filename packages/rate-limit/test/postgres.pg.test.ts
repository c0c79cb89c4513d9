import { expect, it } from "@effect/vitest"
import pg from "pg"
import {
  makePostgresRateLimiter,
  RATE_LIMIT_TABLE,
  type ClosableRateLimiter,
  type PostgresRateLimiterOptions
} from "@accord/rate-limit"
import { answers, databaseUrl, skipReason, uniqueName, withAddress } from "./helpers.js"
import { describeSharedLimiterStore } from "./store-contract.js"

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

describeSharedLimiterStore(
  {
    name: "makePostgresRateLimiter",
    skip,
    store: "the database",
    url,
    defaultPort: 5432,
    connection: "per request",
    make: (options, elsewhere) =>
      make({
        ...options,
        ...(elsewhere !== undefined && { connectionString: elsewhere.url }),
        // Where no database answers, the table cannot be created: the limiter is told it exists.
        ...(elsewhere !== undefined && !elsewhere.forwardsToStore && { createTable: false })
      }),
    setup: async () => {
      await adminQuery(`CREATE SCHEMA "${schema}"`)
    },
    cleanup: async () => {
      await Promise.all(opened.map((limiter) => limiter.close()))
      await adminQuery(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`)
    },
    layout: {
      // The two limiters start at once, as two processes would: both create the table, once. Each asks the store
      // until it says the window is spent (the 5th and 6th requests), and no more: 6 counted of the 8 requests.
      description: "one row per key in the table they created once",
      expectStored: async () => {
        const rows = await adminQuery(`SELECT key, points FROM "${schema}".${RATE_LIMIT_TABLE} ORDER BY key`)
        expect(rows.rows).toEqual([
          { key: "accord:rate-limit:client:web", points: 1 },
          { key: "accord:rate-limit:user:u_1", points: 6 }
        ])
      }
    }
  },
  () => {
    it("keeps a key longer than its column as the key's digest, still counted", async () => {
      const limiter = await make({ capacity: 1 })
      const key = `user:${"x".repeat(400)}`
      expect([await limiter.consume(key), await limiter.consume(key)]).toEqual([0, 1])
      const rows = await adminQuery(`SELECT key FROM "${schema}".${RATE_LIMIT_TABLE} WHERE key LIKE '%sha256:%'`)
      expect(rows.rows).toEqual([{ key: expect.stringMatching(/^accord:rate-limit:sha256:[0-9a-f]{64}$/) }])
    })

    it("counts a key with a NUL (which PostgreSQL text cannot hold) as its digest: no store error, nothing decided in the process", async () => {
      const errors: Array<unknown> = []
      const limiter = await make({ capacity: 1, onError: (error) => errors.push(error) })
      const key = "user:a\u0000b"
      expect([await limiter.consume(key), await limiter.consume(key)]).toEqual([0, 1])
      expect(errors).toEqual([])
    })

    it("refuses to start, having closed its pool, when it cannot create its table", async () => {
      await expect(
        makePostgresRateLimiter({
          capacity: 1,
          refillPerSecond: 1,
          connectionString: withAddress(url, "127.0.0.1", 1)
        })
      ).rejects.toThrow(/ECONNREFUSED/)
    })
  }
)
