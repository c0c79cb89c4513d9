import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { paths, send } from "@accord/conformance"
import { createLogger } from "../src/logger.js"
import { RATE_LIMIT_STORE_BACK, RATE_LIMIT_STORE_FAILED, rateLimitStoreLogging } from "../src/throttled-log.js"
import { bearer, buildServer, makeTempDir, spawnCli, stopped, testSeed, USER_TOKEN } from "./cli-helpers.js"

const FAILED = RATE_LIMIT_STORE_FAILED

describe("rateLimitStoreLogging", () => {
  it("logs the first failure at once, then at most one line per interval with the count it did not log, and the return after a logged failure", () => {
    const lines: Array<Record<string, unknown>> = []
    const logger = createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line)) })
    let now = 0
    const log = rateLimitStoreLogging(
      logger,
      (error) => String(error),
      2,
      30_000,
      () => now
    )
    log.onError(new Error("connect ECONNREFUSED 127.0.0.1:6379"))
    now = 1000
    log.onError(new Error("second"))
    log.onRecover(1234.5)
    now = 29_999
    log.onError(new Error("third"))
    // Its failure was not logged: neither is its return, so the log never says "back" while the store is down.
    log.onRecover(10)
    expect(lines).toHaveLength(2)
    now = 30_000
    log.onError(new Error("Command timed out"))
    expect(
      lines.map((line) => [line["level"], line["msg"], line["error"], line["failuresNotLogged"], line["localCapacity"]])
    ).toEqual([
      [50, FAILED, "Error: connect ECONNREFUSED 127.0.0.1:6379", 0, 2],
      [30, RATE_LIMIT_STORE_BACK, undefined, undefined, undefined],
      [50, FAILED, "Error: Command timed out", 2, 2]
    ])
    expect(lines[1]?.["failedForMs"]).toBe(1235)
  })
})

describe("the CLI with its rate limit store unreachable", () => {
  let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined
  let seedPath = ""
  beforeAll(async () => {
    buildServer()
    temp = await makeTempDir()
    seedPath = await temp.write("seed.json", testSeed)
  }, 120_000)
  afterAll(() => temp?.cleanup())

  it("starts, limits each credential by itself (never open, never a 500), and logs the failure once, without the Redis URL", async () => {
    const cli = spawnCli([
      "--port",
      "0",
      "--seed",
      seedPath,
      "--rate-limit-capacity",
      "1",
      "--rate-limit-refill-per-second",
      "0.1",
      "--rate-limit-store",
      "redis",
      "--redis-url",
      // Nothing listens on port 1: connections are refused at once.
      "redis://:s3cret-redis-pw@127.0.0.1:1/0"
    ])
    const url = await cli.listening
    const statuses: Array<number> = []
    for (let index = 0; index < 5; index++) {
      statuses.push(
        (await send(url, { method: "GET", path: paths.paymentMethods, headers: bearer(USER_TOKEN) })).status
      )
    }
    // The whole capacity, 1, per window of 10 s: this process is the only one.
    expect(statuses).toEqual([200, 429, 429, 429, 429])
    expect(await stopped(cli)).toEqual({ code: 0, signal: null })

    const failures = cli.logLines().filter((line) => line["msg"] === FAILED)
    expect(failures).toHaveLength(1)
    expect(failures[0]).toMatchObject({ level: 50, error: expect.stringContaining("ECONNREFUSED"), localCapacity: 1 })
    expect(cli.stderr()).not.toContain("s3cret-redis-pw")
    expect(cli.stdout()).not.toContain("s3cret-redis-pw")
  })
})
