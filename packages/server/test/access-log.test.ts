import { execFileSync, spawn } from "node:child_process"
import { closeSync, openSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { pino } from "pino"
import type { RequestLog } from "@accord/core"
import type { ClientErrorLog } from "@accord/node/server"
import { ConfigError, createLogger, parseConfig, redactPaths, requestLogging } from "../src/index.js"
import { BufferedLog, LOG_FLUSH_INTERVAL_MS, MAX_BUFFERED_LOG_BYTES } from "../src/buffered-log.js"
import { durationJson } from "../src/request-line.js"
import {
  bearer,
  buildServer,
  makeTempDir,
  openConnection,
  repoRoot,
  spawnCli,
  stopped,
  USER_TOKEN,
  type Cli,
  useBuiltServerAndSeed
} from "./cli-helpers.js"

// docs/operations.md, "Logs": one "request" line per answer, written without pino's redaction, in batches.

const answered = (status: number, extra: Partial<RequestLog> = {}): RequestLog => ({
  requestId: `req-${status}`,
  method: "PUT",
  route: "/api/users/v1/preferences/language/",
  path: undefined,
  status,
  durationMs: 0.4123,
  ...extra
})

/** A logger of createLogger writing into memory, and what it wrote. */
const memoryLogger = (level: "info" | "warn" = "info") => {
  const lines: Array<string> = []
  const logger = createLogger(level, { write: (line: string) => void lines.push(line) })
  return { logger, lines }
}

const withoutTime = (line: string | undefined) => line?.replace(/"time":"[^"]*"/, '"time":"T"')

describe("durationJson", () => {
  it("writes any duration exactly as String does (what pino writes), the microsecond ones without it", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999_999_999_999 }), (micros) => {
        const ms = micros / 1000
        expect(durationJson(ms)).toBe(String(ms))
      }),
      { numRuns: 20_000 }
    )
    fc.assert(
      fc.property(fc.double({ noNaN: true }), (ms) => {
        expect(durationJson(ms)).toBe(JSON.stringify(ms))
      }),
      { numRuns: 5_000 }
    )
    for (const ms of [0, 0.001, 0.01, 0.1, 0.12, 0.102, 1.5, 12.34, 999.999, 1e9, 0.4123])
      expect(durationJson(ms)).toBe(String(ms))
    expect(durationJson(null)).toBe("null")
  })
})

describe("the request line", () => {
  it("is byte for byte the line pino writes for the same record, in the same key order (time aside)", () => {
    const { logger, lines } = memoryLogger()
    // pino as createLogger sets it up, redaction aside: what the request lines were written with until now.
    const expected: Array<string> = []
    const reference = pino(
      { name: "accord", level: "info", timestamp: pino.stdTimeFunctions.isoTime },
      { write: (line: string) => void expected.push(line) }
    )
    const hooks = requestLogging(logger)
    const records: ReadonlyArray<RequestLog> = [
      answered(200),
      answered(404, { route: undefined, path: '/caf%C3%A9/"quoted"\\/[masked]' }),
      answered(200, { traceId: "4bf92f3577b34da6a3ce929d0e0e4736" }),
      answered(503)
    ]
    for (const record of records) {
      hooks.onResponse?.(record)
      const line = {
        requestId: record.requestId,
        method: record.method,
        route: record.route ?? null,
        path: record.path ?? null,
        status: record.status,
        durationMs: record.durationMs,
        ...(record.traceId !== undefined && { traceId: record.traceId })
      }
      if (record.status >= 500) reference.warn(line, "request")
      else reference.info(line, "request")
    }
    const refusal: ClientErrorLog = { requestId: "req-431", method: undefined, status: 431 }
    hooks.onClientError?.(refusal)
    reference.info(
      { requestId: "req-431", method: null, route: null, path: null, status: 431, durationMs: null },
      "request"
    )

    expect(lines.map(withoutTime)).toEqual(expected.map(withoutTime))
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>).map((line) => line["level"])).toEqual([
      30, 30, 30, 40, 30
    ])
  })

  it("has pino's ISO time, to the millisecond", () => {
    const { logger, lines } = memoryLogger()
    const before = Date.now()
    requestLogging(logger).onResponse?.(answered(200))
    const after = Date.now()
    const time = (JSON.parse(lines[0] ?? "") as { time: string }).time
    expect(time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    expect(Date.parse(time)).toBeGreaterThanOrEqual(before)
    expect(Date.parse(time)).toBeLessThanOrEqual(after)
  })

  it("follows the log level: at warn only a 5xx answer's line", () => {
    const { logger, lines } = memoryLogger("warn")
    const hooks = requestLogging(logger)
    for (const status of [200, 404, 500, 503]) hooks.onResponse?.(answered(status))
    hooks.onClientError?.({ requestId: "refused", method: "GET", status: 400 })
    expect(lines.map((line) => (JSON.parse(line) as { status: number }).status)).toEqual([500, 503])
  })

  it("keeps pino's redaction for every other line", () => {
    const { logger, lines } = memoryLogger()
    expect(redactPaths).toContain("*.authorization")
    logger.info({ request: { authorization: "Bearer secret-in-free-text" } }, "free text")
    expect(lines.join("")).not.toContain("secret-in-free-text")
    expect(lines.join("")).toContain("[redacted]")
  })
})

describe("--log-requests (LOG_REQUESTS)", () => {
  const statusesLogged = (logRequests: "all" | "off" | { sample: number }, statuses: ReadonlyArray<number>) => {
    const { logger, lines } = memoryLogger()
    const hooks = requestLogging(logger, { logRequests })
    statuses.forEach((status, index) => {
      if (status === 400) hooks.onClientError?.({ requestId: `r${index}`, method: undefined, status })
      else hooks.onResponse?.(answered(status, { requestId: `r${index}` }))
    })
    return lines.map((line) => (JSON.parse(line) as { requestId: string }).requestId)
  }
  const statuses = [200, 200, 500, 201, 404, 400, 200, 503, 200, 200]

  it("all (the default): every answer", () => {
    expect(statusesLogged("all", statuses)).toHaveLength(statuses.length)
  })

  it("off: only the 5xx answers", () => {
    expect(statusesLogged("off", statuses)).toEqual(["r2", "r7"])
  })

  it("sample=N: the first of every N answers, counting refusals before the handler, and every 5xx", () => {
    // Answers other than 5xx: r0 r1 r3 r4 r5 r6 r8 r9; one in 3 is r0, r4, r8.
    expect(statusesLogged({ sample: 3 }, statuses)).toEqual(["r0", "r2", "r4", "r7", "r8"])
    expect(statusesLogged({ sample: 1 }, statuses)).toHaveLength(statuses.length)
  })

  const parse = (argv: ReadonlyArray<string>, env: Record<string, string> = {}) => {
    const parsed = parseConfig(argv, env)
    if (parsed._tag !== "Run") throw new Error("expected a config")
    return parsed.config.logRequests
  }

  it("is parsed from the flag or the environment, all by default", () => {
    expect(parse([])).toBe("all")
    expect(parse(["--log-requests", "off"])).toBe("off")
    expect(parse([], { LOG_REQUESTS: "sample=100" })).toEqual({ sample: 100 })
    expect(parse(["--log-requests=sample=7"], { LOG_REQUESTS: "off" })).toEqual({ sample: 7 })
  })

  it.each([["none"], ["sample"], ["sample=0"], ["sample=-1"], ["sample=1.5"], ["sample=1000001"], ["ALL"]])(
    "refuses %j with exit code 2, naming the rule",
    (value) => {
      expect(() => parseConfig(["--log-requests", value], {})).toThrow(ConfigError)
      expect(() => parseConfig(["--log-requests", value], {})).toThrow(
        `--log-requests (LOG_REQUESTS) must be all, off or sample=N with N from 1 to 1000000, got ${JSON.stringify(value)}`
      )
    }
  )
})

describe("BufferedLog, on a file descriptor", () => {
  let temp: Awaited<ReturnType<typeof makeTempDir>>
  beforeAll(async () => {
    temp = await makeTempDir()
  })
  afterAll(() => temp.cleanup())

  const line = (index: number, size = 100) => `{"n":${index},"pad":"${"x".repeat(size)}"}\n`

  /**
   * Polls `check` every 10 ms (the thread pool writes on its own schedule), giving up after 20 s: a bound only for a
   * write that never comes, far past any machine's slowness.
   */
  const until = async <A>(check: () => A | undefined): Promise<A | undefined> => {
    for (const giveUp = performance.now() + 20_000; performance.now() < giveUp;) {
      const found = check()
      if (found !== undefined) return found
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    return undefined
  }
  const contentOf = (path: string) => () => {
    const content = readFileSync(path, "utf8")
    return content === "" ? undefined : content
  }

  it("holds lines for the flush interval, then writes them in order", async () => {
    const path = join(temp.dir, "interval.log")
    const fd = openSync(path, "w")
    try {
      const log = new BufferedLog(fd)
      for (let index = 0; index < 10; index++) log.write(line(index))
      expect(readFileSync(path, "utf8")).toBe("")
      const startedAt = performance.now()
      expect(await until(contentOf(path))).toBe(Array.from({ length: 10 }, (_, index) => line(index)).join(""))
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(LOG_FLUSH_INTERVAL_MS - 20)
    } finally {
      closeSync(fd)
    }
  })

  it("writes the lines once 64 KiB wait, without waiting for the interval; flush(callback) writes the rest", async () => {
    const path = join(temp.dir, "size.log")
    const fd = openSync(path, "w")
    try {
      const log = new BufferedLog(fd, { flushIntervalMs: 3_600_000 })
      const lines = Array.from({ length: 700 }, (_, index) => line(index))
      for (const text of lines) log.write(text)
      // The first batch: the lines up to the one that made 64 KiB.
      let firstBatch = ""
      for (const text of lines) if (firstBatch.length < 64 * 1024) firstBatch += text
      expect(await until(contentOf(path))).toBe(firstBatch)
      await new Promise<void>((resolve) => log.flush(resolve))
      expect(readFileSync(path, "utf8")).toBe(lines.join(""))
    } finally {
      closeSync(fd)
    }
  })

  it(`holds at most ${MAX_BUFFERED_LOG_BYTES / 1024 / 1024} MiB for a stderr that does not read, drops the lines past it and reports their count once it reads again`, async () => {
    // A pipe (a FIFO) whose reader, `cat`, is stopped: nobody reads, as with a stalled log collector.
    const fifo = join(temp.dir, "stalled.fifo")
    execFileSync("mkfifo", [fifo])
    const cat = spawn("cat", [fifo], { stdio: ["ignore", "pipe", "ignore"] })
    // Returns once cat has opened its end.
    const fd = openSync(fifo, "w")
    cat.kill("SIGSTOP")
    let received = 0
    cat.stdout.on("data", (chunk: Buffer) => (received += chunk.length))
    try {
      const log = new BufferedLog(fd)
      const reports: Array<number> = []
      log.onDropped = (lines) => reports.push(lines)
      const text = line(0, 1000)
      const count = Math.ceil((MAX_BUFFERED_LOG_BYTES * 1.25) / text.length)
      for (let index = 0; index < count; index++) log.write(text)
      const kept = Math.floor(MAX_BUFFERED_LOG_BYTES / text.length)
      await new Promise((resolve) => setTimeout(resolve, 100))
      expect(reports).toEqual([])

      cat.kill("SIGCONT")
      await new Promise<void>((resolve) => log.flush(resolve))
      expect(reports).toEqual([count - kept])
      closeSync(fd)
      await new Promise((resolve) => cat.once("close", resolve))
      expect(received).toBe(kept * text.length)
    } finally {
      cat.kill("SIGKILL")
    }
  })

  it("writes what is pending when the process exits without a flush (process.exit), to a regular file", async () => {
    buildServer()
    const path = join(temp.dir, "exit.log")
    const bufferedLogJs = join(repoRoot, "packages/server/dist/buffered-log.js")
    const script = `
      import { openSync } from "node:fs"
      const { BufferedLog } = await import(${JSON.stringify(bufferedLogJs)})
      const log = new BufferedLog(openSync(${JSON.stringify(path)}, "w"))
      for (let index = 0; index < 5; index++) log.write(\`line \${index}\\n\`)
      process.exit(0)`
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], { stdio: "ignore" })
    expect(await new Promise((resolve) => child.once("exit", resolve))).toBe(0)
    expect(readFileSync(path, "utf8")).toBe("line 0\nline 1\nline 2\nline 3\nline 4\n")
  })
})

describe("the CLI's request lines", () => {
  const suite = useBuiltServerAndSeed()

  const requestLines = (cli: Cli) => cli.logLines().filter((line) => line["msg"] === "request")

  /** `count` GETs of the preferences on one keep-alive connection, each with its request id, one after the other. */
  const getPreferences = async (url: string, count: number, prefix: string): Promise<number> => {
    const connection = await openConnection(url)
    let answers = 0
    for (let index = 0; index < count; index++) {
      connection.send(
        "GET /api/users/v1/preferences/language/ HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
          `Authorization: ${bearer(USER_TOKEN).authorization}\r\nX-Request-Id: ${prefix}-${index}\r\n\r\n`
      )
      await connection.received(`: ${prefix}-${index}\r\n`)
      answers += 1
    }
    connection.destroy()
    return answers
  }

  it.each(["fastify", "fetch"] as const)(
    "reach stderr when SIGTERM comes right after the answers (--adapter %s): one line per answer",
    async (adapter) => {
      const cli = spawnCli(["--adapter", adapter, "--port", "0", "--seed", suite.seedPath])
      const url = await cli.listening
      const answers = await getPreferences(url, 300, "sigterm")
      // At once: the last lines are still in the buffer (LOG_FLUSH_INTERVAL_MS), the exit writes them.
      expect(await stopped(cli)).toEqual({ code: 0, signal: null })
      const ids = requestLines(cli).map((line) => line["requestId"])
      expect(ids).toHaveLength(answers)
      expect(ids).toEqual(Array.from({ length: answers }, (_, index) => `sigterm-${index}`))
    }
  )

  it("--log-requests sample=3 logs one answer in three, LOG_REQUESTS=off none", async () => {
    const sampled = spawnCli(["--port", "0", "--seed", suite.seedPath, "--log-requests", "sample=3"])
    expect(await getPreferences(await sampled.listening, 9, "sampled")).toBe(9)
    expect(await stopped(sampled)).toEqual({ code: 0, signal: null })
    expect(requestLines(sampled).map((line) => line["requestId"])).toEqual(["sampled-0", "sampled-3", "sampled-6"])

    const off = spawnCli(["--port", "0", "--seed", suite.seedPath], { LOG_REQUESTS: "off" })
    expect(await getPreferences(await off.listening, 5, "off")).toBe(5)
    expect(await stopped(off)).toEqual({ code: 0, signal: null })
    expect(requestLines(off)).toEqual([])
    expect(off.logLines().map((line) => line["msg"])).toContain("stopped")
  })
})
