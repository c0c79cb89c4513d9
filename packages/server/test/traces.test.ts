import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { createLogger, defaultConfig, parseConfig, startAccord, type AccordConfig } from "../src/index.js"
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
import { startOtlpReceiver, type ReceivedSpan } from "./otlp-receiver.js"

const LANGUAGE = "/api/users/v1/preferences/language/"
const PLAN_ENTRY = "/api/plans/v1/subscription-plans/public/"
const PASSWORD = "traces-test-password-5e1a"
const SERVER = 2
const INTERNAL = 1
const ERROR = 2

/** A logger writing JSON lines into an array, so a test can read what was logged. */
const memoryLogger = () => {
  const lines: Array<string> = []
  const logger = createLogger("info", { write: (line: string) => void lines.push(line) })
  return { logger, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) }
}

const testConfig = (overrides: Partial<AccordConfig> = {}): AccordConfig => ({
  ...defaultConfig,
  port: 0,
  scrypt: { N: 1024, r: 8, p: 1 },
  ...overrides
})

/** A caller's W3C trace context: fresh ids each time, sampled. */
const callerContext = () => {
  const traceId = randomBytes(16).toString("hex")
  const spanId = randomBytes(8).toString("hex")
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` }
}

/** The one span named `name` whose parent is `parent` (undefined: any parent). */
const spanNamed = (spans: ReadonlyArray<ReceivedSpan>, name: string, parent?: ReceivedSpan): ReceivedSpan => {
  const found = spans.filter(
    (span) => span.name === name && (parent === undefined || span.parentSpanId === parent.spanId)
  )
  expect(found.map((span) => span.name)).toEqual([name])
  return found[0]!
}

let temp: Awaited<ReturnType<typeof makeTempDir>>
let seedFile = ""
beforeAll(async () => {
  temp = await makeTempDir()
  seedFile = await temp.write("seed.json", testSeed)
})
afterAll(() => temp.cleanup())

/**
 * The traced service runs as the CLI does (a child process): OpenTelemetry's packages are loaded by Node itself, and
 * SIGTERM must export the last spans (the batch processor would wait 5 s otherwise).
 */
const startTracedCli = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const receiver = await startOtlpReceiver()
  const cli = spawnCli(["--port", "0", "--seed", seedFile, ...args], {
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_SERVICE_NAME: "accord-test",
    ...env
  })
  const url = await cli.listening
  const stop = async () => {
    expect(await stopped(cli)).toEqual({ code: 0, signal: null })
    await receiver.close()
  }
  return { receiver, cli, url, stop }
}

describe.each(["fastify", "koa", "express", "fetch"] as const)("traces over OTLP/HTTP, %s adapter", (adapter) => {
  beforeAll(buildServer, 60_000)

  it("exports server, use case and store spans as one tree under the caller's traceparent, with no secret", async () => {
    const { receiver, cli, url, stop } = await startTracedCli(["--adapter", adapter])
    const caller = callerContext()
    const put = await fetch(`${url}${LANGUAGE}?token=${USER_TOKEN}`, {
      method: "PUT",
      headers: {
        ...bearer(USER_TOKEN),
        "content-type": "application/json",
        traceparent: caller.traceparent,
        "x-request-id": "traced-put"
      },
      body: JSON.stringify({ language: "fr" })
    })
    expect(put.status).toBe(200)
    const post = await fetch(`${url}${PLAN_ENTRY}`, {
      method: "POST",
      headers: { ...bearer(CLIENT_TOKEN), "content-type": "application/json", "x-request-id": "traced-post" },
      body: JSON.stringify({ email: "ada@example.org", password: PASSWORD })
    })
    expect(post.status).toBe(201)
    // A path nothing matched may be anything a client typed: here a token.
    const unknown = await fetch(`${url}/api/nothing/${USER_TOKEN}`, { headers: { "x-request-id": "traced-404" } })
    expect(unknown.status).toBe(404)
    // Nothing is exported yet (the batch processor waits 5 s): these spans leave only because SIGTERM flushes them.
    await stop()

    const spans = receiver.spans
    expect(receiver.paths.length).toBeGreaterThan(0)
    expect(receiver.paths.every((path) => path.startsWith("POST /v1/traces application/json"))).toBe(true)
    expect(new Set(spans.map((span) => span.serviceName))).toEqual(new Set(["accord-test"]))

    // PUT language: the caller's span > server span > use case > store; the credential check under the server span.
    const putServer = spanNamed(spans, `PUT ${LANGUAGE}`)
    expect(putServer).toMatchObject({ traceId: caller.traceId, parentSpanId: caller.spanId, kind: SERVER })
    expect(putServer.attributes).toEqual({
      "http.request.method": "PUT",
      "http.route": LANGUAGE,
      "url.path": LANGUAGE,
      "server.address": "127.0.0.1",
      "server.port": Number(new URL(url).port),
      "http.response.status_code": 200
    })
    const putUseCase = spanNamed(spans, "updateLanguagePreferences", putServer)
    expect(putUseCase).toMatchObject({ traceId: caller.traceId, kind: INTERNAL })
    expect(spanNamed(spans, "PreferencesStore.update", putUseCase).traceId).toBe(caller.traceId)
    spanNamed(spans, "Authenticator.authenticate", putServer)

    // POST plan entry: a new trace (no traceparent), the hasher and the store under the use case.
    const postServer = spanNamed(spans, `POST ${PLAN_ENTRY}`)
    expect(postServer.parentSpanId).toBeUndefined()
    expect(postServer.traceId).not.toBe(caller.traceId)
    expect(postServer.attributes["http.response.status_code"]).toBe(201)
    const postUseCase = spanNamed(spans, "createPublicPlanEntry", postServer)
    spanNamed(spans, "PasswordHasher.hash", postUseCase)
    spanNamed(spans, "PlanEntries.insertIfAbsent", postUseCase)

    // 404: named by the method alone, and without the path.
    const notFound = spanNamed(spans, "GET")
    expect(notFound.attributes["http.response.status_code"]).toBe(404)
    expect(notFound.attributes).not.toHaveProperty("url.path")
    expect(notFound.attributes).not.toHaveProperty("http.route")

    // The log line of each request names its trace.
    const requestLine = (id: string) => cli.logLines().find((entry) => entry["requestId"] === id)
    expect(cli.logLines().find((entry) => entry["msg"] === "listening")).toMatchObject({ tracing: true })
    expect(requestLine("traced-put")).toMatchObject({ msg: "request", status: 200, traceId: caller.traceId })
    expect(requestLine("traced-post")).toMatchObject({ msg: "request", status: 201, traceId: postServer.traceId })
    expect(requestLine("traced-404")).toMatchObject({ status: 404, traceId: notFound.traceId })

    // No credential, password or query anywhere in what was exported (attributes, events, resource).
    const exported = receiver.bodies.join("\n")
    for (const secret of [USER_TOKEN, CLIENT_TOKEN, PASSWORD, "token="]) expect(exported).not.toContain(secret)
  })
})

describe("traces: the untraced path", () => {
  it("without an OTLP endpoint the config has no tracing, and the log lines no trace id", async () => {
    const parsed = parseConfig([], {})
    expect(parsed._tag === "Run" && parsed.config.tracing).toBeUndefined()
    const log = memoryLogger()
    const accord = await startAccord(testConfig({ adapter: "koa", seedFile }), { logger: log.logger })
    const put = await fetch(`${accord.url}${LANGUAGE}`, {
      method: "PUT",
      headers: { ...bearer(USER_TOKEN), "content-type": "application/json", traceparent: callerContext().traceparent },
      body: JSON.stringify({ language: "fr" })
    })
    expect(put.status).toBe(200)
    await accord.close()
    expect(log.entries().find((entry) => entry["msg"] === "listening")).toMatchObject({ tracing: false })
    const line = log.entries().find((entry) => entry["msg"] === "request")
    expect(line).toMatchObject({ status: 200 })
    expect(line).not.toHaveProperty("traceId")
  })
})

describe("traces: sampling and errors", () => {
  beforeAll(buildServer, 60_000)

  it("marks the server span of a 5xx as an error with error.type", async () => {
    // Hashing with one slot and no queue, and a hash long enough (tens of ms) that concurrent sign-ups find it taken.
    const { receiver, url, stop } = await startTracedCli([], {
      SCRYPT_N: "16384",
      SCRYPT_MAX_CONCURRENT: "1",
      SCRYPT_MAX_QUEUED: "0"
    })
    const signUp = (n: number) =>
      fetch(`${url}${PLAN_ENTRY}`, {
        method: "POST",
        headers: { ...bearer(CLIENT_TOKEN), "content-type": "application/json" },
        body: JSON.stringify({ email: `user${n}@example.org`, password: PASSWORD })
      })
    const statuses = (await Promise.all([1, 2, 3, 4, 5, 6].map(signUp))).map((response) => response.status)
    await stop()
    expect(statuses).toContain(503)
    const servers = receiver.spans.filter((span) => span.name === `POST ${PLAN_ENTRY}`)
    expect(servers.map((span) => span.attributes["http.response.status_code"]).sort()).toEqual([...statuses].sort())
    for (const span of servers) {
      const failed = span.attributes["http.response.status_code"] === 503
      expect(span.statusCode === ERROR).toBe(failed)
      expect(span.attributes["error.type"]).toBe(failed ? "503" : undefined)
    }
  })

  it("follows the caller's sampling decision: an unsampled traceparent exports nothing, but the log has its trace id", async () => {
    const { receiver, cli, url, stop } = await startTracedCli([])
    const caller = callerContext()
    const put = await fetch(`${url}${LANGUAGE}`, {
      method: "PUT",
      headers: {
        ...bearer(USER_TOKEN),
        "content-type": "application/json",
        traceparent: caller.traceparent.replace(/-01$/, "-00")
      },
      body: JSON.stringify({ language: "fr" })
    })
    expect(put.status).toBe(200)
    await stop()
    expect(receiver.spans.filter((span) => span.traceId === caller.traceId)).toEqual([])
    expect(cli.logLines().find((entry) => entry["msg"] === "request")).toMatchObject({ traceId: caller.traceId })
  })
})
