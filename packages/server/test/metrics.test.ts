import cluster, { type Worker } from "node:cluster"
import { createServer } from "node:net"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"
import {
  getMetricsFromIterator,
  type PromData,
  type PromHistogramData,
  type PromLabels,
  type PromMetrics
} from "prom2javascript"
import {
  createLogger,
  defaultConfig,
  serveClusterMetrics,
  startAccord,
  StartError,
  type AccordConfig
} from "../src/index.js"
import {
  bearer,
  buildServer,
  makeTempDir,
  openConnection,
  spawnCli,
  stopped,
  testSeed,
  USER_TOKEN
} from "./cli-helpers.js"
import { databaseUrl, dropSchema, freshSchema, skipReason } from "./postgres-helpers.js"

const LANGUAGE_ROUTE = "/api/users/v1/preferences/language/"
const PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8"

/** Scrapes `${metricsUrl}/metrics` and parses the text (the parser throws on a malformed line or histogram). */
const scrape = async (metricsUrl: string): Promise<{ text: string; metrics: PromMetrics }> => {
  const response = await fetch(`${metricsUrl}/metrics`)
  expect(response.status).toBe(200)
  expect(response.headers.get("content-type")).toBe(PROMETHEUS_TEXT)
  const text = await response.text()
  // NaN is a valid sample value (Node's event loop lag before its first measurement) that the parser does not read.
  const lines = text.split("\n").filter((line) => !/ nan$/i.test(line))
  return { text, metrics: await getMetricsFromIterator(lines[Symbol.iterator]()) }
}

/** A counter's or gauge's samples; an absent metric fails the test with its name. */
const samples = (metrics: PromMetrics, name: string): ReadonlyArray<PromData> => {
  const metric = metrics[name]
  if (metric === undefined) throw new Error(`no metric ${name}`)
  return metric.data as ReadonlyArray<PromData>
}

const value = (metrics: PromMetrics, name: string): number => {
  const [sample] = samples(metrics, name)
  if (sample === undefined) throw new Error(`no sample of ${name}`)
  return sample.value
}

const histograms = (metrics: PromMetrics, name: string): ReadonlyArray<PromHistogramData> => {
  const metric = metrics[name]
  if (metric === undefined || metric.type !== "histogram") throw new Error(`no histogram ${name}`)
  return metric.data as ReadonlyArray<PromHistogramData>
}

const byLabels = <A extends { labels: PromLabels }>(list: ReadonlyArray<A>, pick: (item: A) => number) =>
  list
    .map((item) => ({ ...item.labels, value: pick(item) }))
    .sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))

/** A logger writing JSON lines into an array, to check that logging still works beside metrics. */
const memoryLogger = () => {
  const lines: Array<string> = []
  const logger = createLogger("info", { write: (line: string) => void lines.push(line) })
  return { logger, entries: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) }
}

const withoutMetrics: AccordConfig = { ...defaultConfig, port: 0, scrypt: { N: 1024, r: 8, p: 1 } }

const testConfig = (overrides: Partial<AccordConfig> = {}): AccordConfig => ({
  ...withoutMetrics,
  metrics: { host: "127.0.0.1", port: 0 },
  ...overrides
})

let temp: Awaited<ReturnType<typeof makeTempDir>>
let seedFile = ""
beforeAll(async () => {
  temp = await makeTempDir()
  seedFile = await temp.write("seed.json", testSeed)
})
afterAll(() => temp.cleanup())

/**
 * The known mix: 3 PUT language answered 200, 2 without a credential (401), 1 unknown path (404) that carries a
 * token, a request id and a path a label must never show, and 1 refused before the handler (417, the guard's).
 */
const sendKnownMix = async (url: string): Promise<void> => {
  const language = `${url}${LANGUAGE_ROUTE}`
  const put = (headers: Record<string, string>) =>
    fetch(language, {
      method: "PUT",
      headers: { ...headers, "content-type": "application/json" },
      body: JSON.stringify({ language: "fr" })
    })
  for (let i = 0; i < 3; i++) expect((await put(bearer(USER_TOKEN))).status).toBe(200)
  for (let i = 0; i < 2; i++) expect((await put({})).status).toBe(401)
  const unknown = await fetch(`${url}/api/no-such-route/secret-path-segment`, {
    headers: { ...bearer(USER_TOKEN), "x-request-id": "metrics-test-request-id" }
  })
  expect(unknown.status).toBe(404)
  const refused = await openConnection(url)
  refused.send("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: something-else\r\n\r\n")
  expect(await refused.closed).toMatch(/^HTTP\/1\.1 417 /)
}

describe.each(["fastify", "koa", "express", "fetch"] as const)("metrics with --adapter %s", (adapter) => {
  it("counts a known mix of requests exactly, with bounded labels, beside the request log", async () => {
    const log = memoryLogger()
    const accord = await startAccord(testConfig({ adapter, seedFile }), { logger: log.logger })
    try {
      const metricsUrl = accord.metricsUrl
      if (metricsUrl === undefined) throw new Error("no metrics listener")
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:[1-9][0-9]*$/)
      expect(metricsUrl).not.toBe(accord.url)
      await sendKnownMix(accord.url)

      const { text, metrics } = await scrape(metricsUrl)
      expect(byLabels(samples(metrics, "accord_http_requests_total"), (sample) => sample.value)).toEqual(
        byLabels(
          [
            { labels: { method: "PUT", route: LANGUAGE_ROUTE, status: "200" }, value: 3 },
            { labels: { method: "PUT", route: LANGUAGE_ROUTE, status: "401" }, value: 2 },
            { labels: { method: "GET", route: "unmatched", status: "404" }, value: 1 },
            { labels: { method: "GET", route: "unmatched", status: "417" }, value: 1 }
          ],
          (sample) => sample.value
        )
      )
      // The histogram times what the handler answered: everything but the refusal answered before it.
      const durations = histograms(metrics, "accord_http_request_duration_seconds")
      expect(byLabels(durations, (histogram) => histogram.count)).toEqual(
        byLabels(
          [
            { labels: { method: "PUT", route: LANGUAGE_ROUTE, status: "200" }, count: 3 },
            { labels: { method: "PUT", route: LANGUAGE_ROUTE, status: "401" }, count: 2 },
            { labels: { method: "GET", route: "unmatched", status: "404" }, count: 1 }
          ],
          (histogram) => histogram.count
        )
      )
      expect(durations.reduce((sum, histogram) => sum + histogram.count, 0)).toBe(6)
      expect(value(metrics, "accord_http_requests_in_flight")).toBe(0)

      expect(value(metrics, "accord_password_hashes_running")).toBe(0)
      expect(value(metrics, "accord_password_hashes_waiting")).toBe(0)
      expect(value(metrics, "accord_password_hashes_max_running")).toBe(defaultConfig.hashing.maxConcurrent)
      expect(value(metrics, "accord_password_hashes_max_waiting")).toBe(defaultConfig.hashing.maxQueued)
      expect(value(metrics, "accord_password_hashes_rejected_total")).toBe(0)
      // Node's process metrics, from collectDefaultMetrics; no pool without PostgreSQL.
      expect(value(metrics, "process_cpu_user_seconds_total")).toBeGreaterThan(0)
      expect(value(metrics, "process_resident_memory_bytes")).toBeGreaterThan(0)
      expect(metrics["nodejs_eventloop_lag_p99_seconds"]?.type).toBe("gauge")
      expect(metrics["accord_pg_pool_connections"]).toBeUndefined()

      // No credential, path or request id becomes a label (docs/operations.md, "Metrics").
      for (const secret of [USER_TOKEN, "secret-path-segment", "no-such-route", "metrics-test-request-id"]) {
        expect(text).not.toContain(secret)
      }
      // Both hooks keep working: one log line per answer, as before.
      expect(log.entries().filter((entry) => entry["msg"] === "request")).toHaveLength(7)
    } finally {
      await accord.close()
    }
  })
})

describe("the metrics listener", () => {
  it("answers GET and HEAD /metrics only (404 otherwise), and closes with the service", async () => {
    const accord = await startAccord(testConfig(), { logger: memoryLogger().logger })
    const metricsUrl = accord.metricsUrl ?? ""
    try {
      for (const [method, path] of [
        ["GET", "/"],
        ["GET", "/api/health"],
        ["GET", "/metrics/x"],
        ["POST", "/metrics"]
      ] as const) {
        const response = await fetch(`${metricsUrl}${path}`, { method })
        expect(response.status, `${method} ${path}`).toBe(404)
      }
      const head = await fetch(`${metricsUrl}/metrics`, { method: "HEAD" })
      expect(head.status).toBe(200)
      expect(head.headers.get("content-type")).toBe(PROMETHEUS_TEXT)
      // The service does not serve metrics on its own port.
      expect((await fetch(`${accord.url}/metrics`)).status).toBe(404)
    } finally {
      await accord.close()
    }
    await expect(fetch(`${metricsUrl}/metrics`)).rejects.toThrow()
  })

  it("is off unless asked for", async () => {
    const accord = await startAccord(withoutMetrics, { logger: memoryLogger().logger })
    expect(accord.metricsUrl).toBeUndefined()
    await accord.close()
  })

  it("a taken metrics port fails the start with StartError before the service listens", async () => {
    const blocker = createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
    const address = blocker.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    const log = memoryLogger()
    try {
      const failure = await startAccord(testConfig({ metrics: { host: "127.0.0.1", port } }), {
        logger: log.logger
      }).catch((error: unknown) => error)
      expect(failure).toBeInstanceOf(StartError)
      expect((failure as StartError).message).toMatch(/^cannot listen for metrics on 127\.0\.0\.1:\d+: .*EADDRINUSE/)
      expect(log.entries().some((entry) => entry["msg"] === "listening")).toBe(false)
    } finally {
      blocker.close()
    }
  })
})

describe("the CLI with --metrics-port", () => {
  beforeAll(() => buildServer(), 120_000)

  it("logs the metrics URL in its listening line, serves the metrics there, and exits 0 on SIGTERM", async () => {
    const cli = spawnCli(["--port", "0", "--seed", seedFile], { METRICS_PORT: "0" })
    try {
      const url = await cli.listening
      await cli.logged("listening")
      const listening = cli.logLines().find((line) => line["msg"] === "listening")
      const metricsUrl = listening?.["metricsUrl"]
      if (typeof metricsUrl !== "string") throw new Error(`no metricsUrl in ${JSON.stringify(listening)}`)
      expect(metricsUrl).toMatch(/^http:\/\/127\.0\.0\.1:[1-9][0-9]*$/)
      expect((await fetch(`${url}/api/health`)).status).toBe(200)
      const { metrics } = await scrape(metricsUrl)
      expect(samples(metrics, "accord_http_requests_total")).toEqual([
        { labels: { method: "GET", route: "/api/health", status: "200" }, value: 1 }
      ])
      expect(await stopped(cli)).toEqual({ code: 0, signal: null })
    } finally {
      // A failed assertion must not leave the process behind.
      if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill("SIGKILL")
    }
  })
})

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `metrics with --store postgres (${skipReason})` : "metrics with --store postgres",
  () => {
    const schema = freshSchema()
    afterAll(() => dropSchema(databaseUrl ?? "", schema))

    it("has the pool's gauges: connections open, idle, the pool's size and the queries waiting", async () => {
      const accord = await startAccord(
        testConfig({
          store: "postgres",
          databaseUrl: Redacted.make(databaseUrl ?? ""),
          databaseSchema: schema,
          seedFile
        }),
        { logger: memoryLogger().logger }
      )
      try {
        expect(
          (await fetch(`${accord.url}/api/payments/v1/payment-methods/`, { headers: bearer(USER_TOKEN) })).status
        ).toBe(200)
        const { text, metrics } = await scrape(accord.metricsUrl ?? "")
        // At least the connection the request used stays open and idle; the default pool has 10.
        expect(value(metrics, "accord_pg_pool_connections")).toBeGreaterThanOrEqual(1)
        expect(value(metrics, "accord_pg_pool_connections_idle")).toBeGreaterThanOrEqual(1)
        expect(value(metrics, "accord_pg_pool_max_connections")).toBe(10)
        expect(value(metrics, "accord_pg_pool_requests_waiting")).toBe(0)
        // The connection string (and its password, if any) is nowhere in the metrics.
        expect(text).not.toContain(databaseUrl)
      } finally {
        await accord.close()
      }
    })
  }
)

describe("a cluster's metrics, summed by the primary", () => {
  const workerScript = fileURLToPath(new URL("./fixtures/metrics-cluster-worker.ts", import.meta.url))
  const workers: Array<Worker> = []
  beforeAll(() => buildServer(), 120_000)
  afterAll(() => {
    for (const worker of workers) worker.kill()
  })

  it("serves the sum of two workers' metrics; the workers open no metrics listener of their own", async () => {
    expect(cluster.isPrimary).toBe(true)
    // The test runner's own Node flags are not for the workers.
    cluster.setupPrimary({ exec: workerScript, execArgv: [], silent: true })
    const started = Array.from({ length: 2 }, () => {
      const worker = cluster.fork({ ACCORD_TEST_SEED: seedFile })
      workers.push(worker)
      let stderr = ""
      worker.process.stderr?.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
      return new Promise<{ url: string; metricsUrl: string | null }>((resolve, reject) => {
        worker.once("message", resolve)
        worker.once("exit", (code) => reject(new Error(`worker exited with ${code}: ${stderr}`)))
      })
    })
    const [first, second] = await Promise.all(started)
    // Workers share the service's port (node:cluster); their metrics go to the primary only.
    expect(second?.url).toBe(first?.url)
    expect([first?.metricsUrl, second?.metricsUrl]).toEqual([null, null])

    const primary = await serveClusterMetrics({ host: "127.0.0.1", port: 0 })
    try {
      const url = first?.url ?? ""
      for (let i = 0; i < 6; i++) expect((await fetch(`${url}/api/health`)).status).toBe(200)
      const { metrics } = await scrape(primary.url)
      // Whichever worker answered each request, the primary's sum is the total.
      expect(samples(metrics, "accord_http_requests_total")).toEqual([
        { labels: { method: "GET", route: "/api/health", status: "200" }, value: 6 }
      ])
      expect(histograms(metrics, "accord_http_request_duration_seconds").map((h) => h.count)).toEqual([6])
      // Each worker has its own hasher: their capacities add up, which shows both answered the scrape.
      expect(value(metrics, "accord_password_hashes_max_running")).toBe(2 * defaultConfig.hashing.maxConcurrent)
      expect(value(metrics, "accord_http_requests_in_flight")).toBe(0)
      expect(value(metrics, "process_resident_memory_bytes")).toBeGreaterThan(0)
    } finally {
      await primary.close()
    }
  })
})

describe('a shared rate limit\'s metrics (docs/operations.md, "Rate limits")', () => {
  it("shows the limiter's own counts when scraped: whether it limits locally, its statements, failures and local decisions", async () => {
    const { createMetrics } = await import("../src/metrics.js")
    const metrics = createMetrics()
    const parse = async () => {
      const lines = (await metrics.registry.metrics()).split("\n").filter((line) => !/ nan$/i.test(line))
      return getMetricsFromIterator(lines[Symbol.iterator]())
    }
    expect((await parse())["accord_rate_limit_limiting_locally"]).toBeUndefined()
    let stats = {
      limitingLocally: false,
      statements: 3,
      storeFailures: 0,
      local: { failed: { allowed: 0, refused: 0 }, busy: { allowed: 1, refused: 0 } }
    }
    metrics.observeRateLimit(() => stats)
    const before = await parse()
    expect(value(before, "accord_rate_limit_limiting_locally")).toBe(0)
    expect(value(before, "accord_rate_limit_store_statements_total")).toBe(3)
    stats = {
      limitingLocally: true,
      statements: 4,
      storeFailures: 1,
      local: { failed: { allowed: 5, refused: 2995 }, busy: { allowed: 1, refused: 0 } }
    }
    const during = await parse()
    expect(value(during, "accord_rate_limit_limiting_locally")).toBe(1)
    expect(value(during, "accord_rate_limit_store_statements_total")).toBe(4)
    expect(value(during, "accord_rate_limit_store_failures_total")).toBe(1)
    expect(byLabels(samples(during, "accord_rate_limit_local_decisions_total"), (sample) => sample.value)).toEqual(
      byLabels(
        [
          { labels: { reason: "store_failed", result: "allowed" }, value: 5 },
          { labels: { reason: "store_failed", result: "refused" }, value: 2995 },
          { labels: { reason: "store_busy", result: "allowed" }, value: 1 },
          { labels: { reason: "store_busy", result: "refused" }, value: 0 }
        ],
        (sample) => sample.value
      )
    )
  })
})
