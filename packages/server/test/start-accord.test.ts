import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"
import pg from "pg"
import { createLogger, defaultConfig, startAccord, StartError, type AccordConfig } from "../src/index.js"
import { bearer, CLIENT_TOKEN, makeTempDir, testSeed, USER_TOKEN } from "./cli-helpers.js"

const databaseUrl = process.env["DATABASE_URL"] || undefined

/** A logger writing JSON lines into an array, so a test can read what was logged. */
const memoryLogger = () => {
  const lines: Array<string> = []
  const logger = createLogger("info", { write: (line: string) => void lines.push(line) })
  return {
    logger,
    text: () => lines.join(""),
    entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>)
  }
}

const testConfig = (overrides: Partial<AccordConfig> = {}): AccordConfig => ({
  ...defaultConfig,
  port: 0,
  scrypt: { N: 1024, r: 8, p: 1 },
  ...overrides
})

let temp: Awaited<ReturnType<typeof makeTempDir>>
let seedFile = ""
beforeAll(async () => {
  temp = await makeTempDir()
  seedFile = await temp.write("seed.json", testSeed)
})
afterAll(() => temp.cleanup())

describe("startAccord", () => {
  it("serves the seeded store and stops serving once closed; close is idempotent", async () => {
    const log = memoryLogger()
    const accord = await startAccord(testConfig({ adapter: "fastify", seedFile }), { logger: log.logger })
    const list = await fetch(`${accord.url}/api/payments/v1/payment-methods`, { headers: bearer(USER_TOKEN) })
    expect(list.status).toBe(200)
    await Promise.all([accord.close(), accord.close()])
    await accord.close()
    await expect(fetch(`${accord.url}/api/health`)).rejects.toThrow()
    expect(log.entries().filter((entry) => entry["msg"] === "stopped")).toHaveLength(1)
  })

  it("logs one line per request with its id, and redacts credentials should they ever reach the logger", async () => {
    const log = memoryLogger()
    const accord = await startAccord(testConfig({ adapter: "koa", seedFile }), { logger: log.logger })
    await fetch(`${accord.url}/api/plans/v1/subscription-plans/public/`, {
      method: "POST",
      headers: { ...bearer(CLIENT_TOKEN), "content-type": "application/json", "x-request-id": "in-process-1" },
      body: JSON.stringify({ email: "grace@example.org", password: "a-long-password-1" })
    })
    await accord.close()
    expect(log.entries().find((entry) => entry["requestId"] === "in-process-1")).toMatchObject({
      msg: "request",
      method: "POST",
      route: "/api/plans/v1/subscription-plans/public/",
      status: 201
    })
    // Defence in depth: a careless log call elsewhere still does not write a credential.
    log.logger.info(
      {
        headers: { authorization: `Bearer ${USER_TOKEN}` },
        password: "a-long-password-1",
        user: { token: USER_TOKEN }
      },
      "careless"
    )
    expect(log.text()).not.toContain(USER_TOKEN)
    expect(log.text()).not.toContain("a-long-password-1")
  })

  it("fails with StartError when the port is taken", async () => {
    const first = await startAccord(testConfig(), { logger: memoryLogger().logger })
    const port = Number(new URL(first.url).port)
    const failure = await startAccord(testConfig({ adapter: "koa", port }), { logger: memoryLogger().logger }).catch(
      (error: unknown) => error
    )
    expect(failure).toBeInstanceOf(StartError)
    expect((failure as StartError).message).toContain(`cannot listen on 127.0.0.1:${port}`)
    await first.close()
  })

  it("fails with StartError naming the cause when the database is unreachable", async () => {
    const config = testConfig({
      store: "postgres",
      databaseUrl: Redacted.make("postgres://postgres:pw-secret@127.0.0.1:1/test")
    })
    const failure = await startAccord(config, { logger: memoryLogger().logger }).catch((error: unknown) => error)
    expect(failure).toBeInstanceOf(StartError)
    expect((failure as StartError).message).toMatch(
      /^cannot start the postgres store: store unreachable: .*ECONNREFUSED/
    )
    expect((failure as StartError).message).not.toContain("pw-secret")
  })
})

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? "startAccord on postgres (skipped: DATABASE_URL not set)" : "startAccord on postgres",
  () => {
    // A database of its own: this test runs without --database-schema (tables in public), and they must start empty.
    const database = `accord_server_${randomBytes(5).toString("hex")}`
    const admin = async (sql: string) => {
      const client = new pg.Client({ connectionString: databaseUrl })
      await client.connect()
      try {
        await client.query(sql)
      } finally {
        await client.end()
      }
    }
    const ownUrl = () => {
      const url = new URL(databaseUrl ?? "")
      url.pathname = `/${database}`
      return Redacted.make(url.toString())
    }
    beforeAll(() => admin(`CREATE DATABASE "${database}"`))
    afterAll(() => admin(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`))

    it("migrates, seeds, and keeps what the API changed across a restart with the same seed", async () => {
      const config = testConfig({ store: "postgres", databaseUrl: ownUrl(), seedFile })
      const first = await startAccord(config, { logger: memoryLogger().logger })
      const changed = await fetch(`${first.url}/api/payments/v1/payment-methods/pm_2/`, {
        method: "PUT",
        headers: bearer(USER_TOKEN)
      })
      expect(changed.status).toBe(200)
      await first.close()

      const log = memoryLogger()
      const second = await startAccord({ ...config, adapter: "koa" }, { logger: log.logger })
      const list = await fetch(`${second.url}/api/payments/v1/payment-methods/`, { headers: bearer(USER_TOKEN) })
      const methods = ((await list.json()) as { data: Array<{ id: string; is_default: boolean }> }).data
      expect(methods.map((method) => [method.id, method.is_default])).toEqual([
        ["pm_1", false],
        ["pm_2", true]
      ])
      await second.close()
      expect(log.entries().find((entry) => entry["msg"] === "seed loaded")).toMatchObject({
        credentialsAdded: 0,
        paymentMethodsAdded: 0
      })
    })
  }
)
