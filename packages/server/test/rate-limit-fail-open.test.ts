import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { paths, send } from "@accord/conformance"
import { createLogger } from "../src/logger.js"
import { rateLimitErrorLogging } from "../src/throttled-log.js"
import { bearer, buildServer, makeTempDir, spawnCli, stopped, testSeed, USER_TOKEN } from "./cli-helpers.js"

const FAILED = "rate limit store failed; requests are served without the limit"

describe("rateLimitErrorLogging", () => {
  it("logs the first failure at once, then at most one line per interval with the count it did not log", () => {
    const lines: Array<Record<string, unknown>> = []
    const logger = createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line)) })
    let now = 0
    const log = rateLimitErrorLogging(
      logger,
      (error) => String(error),
      30_000,
      () => now
    )
    log(new Error("connect ECONNREFUSED 127.0.0.1:6379"))
    now = 1000
    log(new Error("second"))
    now = 29_999
    log(new Error("third"))
    expect(lines).toHaveLength(1)
    now = 30_000
    log(new Error("Command timed out"))
    expect(lines.map((line) => [line["level"], line["msg"], line["error"], line["failuresNotLogged"]])).toEqual([
      [50, FAILED, "Error: connect ECONNREFUSED 127.0.0.1:6379", 0],
      [50, FAILED, "Error: Command timed out", 2]
    ])
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

  it("starts, serves every request (fail open, never a 500), and logs the failure once, without the Redis URL", async () => {
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
    expect(statuses).toEqual([200, 200, 200, 200, 200])
    expect(await stopped(cli)).toEqual({ code: 0, signal: null })

    const failures = cli.logLines().filter((line) => line["msg"] === FAILED)
    expect(failures).toHaveLength(1)
    expect(failures[0]).toMatchObject({ level: 50, error: expect.stringContaining("ECONNREFUSED") })
    expect(cli.stderr()).not.toContain("s3cret-redis-pw")
    expect(cli.stdout()).not.toContain("s3cret-redis-pw")
  })
})
