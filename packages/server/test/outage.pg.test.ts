import { paths, send, type RawRequest, type RawResponse } from "@accord/conformance"
import { startTcpProxy, viaProxy, type TcpProxy } from "@accord/test-support"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"
import { randomBytes } from "node:crypto"
import { setTimeout as delay } from "node:timers/promises"
import { createLogger, defaultConfig, startAccord, type AccordConfig, type RunningAccord } from "../src/index.js"
import { buildServer, makeTempDir, spawnCli, type Cli } from "./cli-helpers.js"
import { adminQuery, databaseUrl, dropSchema, freshSchema, skipReason } from "./postgres-helpers.js"

const url = databaseUrl ?? ""
const run = randomBytes(4).toString("hex")
const user = { id: `outage_${run}`, token: `outage-user-${run}` }
const client = { id: `outage_client_${run}`, token: `outage-client-${run}` }
const [pmA, pmB, pmC] = ["pm_a", "pm_b", "pm_c"].map((id) => `${id}_${run}`) as [string, string, string]
const seed = {
  users: [user],
  clients: [client],
  payment_methods: [
    { id: pmA, user_id: user.id, is_default: true },
    { id: pmB, user_id: user.id },
    { id: pmC, user_id: user.id }
  ]
}

const asUser = { Authorization: `Bearer ${user.token}` }
const asUserJson = { ...asUser, "Content-Type": "application/json" }
const asClientJson = { Authorization: `Bearer ${client.token}`, "Content-Type": "application/json" }
const postEntry = (email: string): RawRequest => ({
  method: "POST",
  path: paths.planEntries,
  headers: asClientJson,
  body: JSON.stringify({ email, password: "outage-test-password" })
})

/** Every operation of the API, as a request that succeeds when the database is there. */
const everyRoute: ReadonlyArray<RawRequest> = [
  { method: "GET", path: paths.health },
  { method: "GET", path: paths.ready },
  { method: "GET", path: paths.preferences, headers: asUser },
  { method: "PUT", path: paths.preferences, headers: asUserJson, body: '{"timezone":120}' },
  { method: "GET", path: paths.paymentMethods, headers: asUser },
  { method: "PUT", path: paths.paymentMethod(pmC), headers: asUser },
  postEntry(`during.${run}@example.com`)
]

const body = (res: RawResponse): Record<string, unknown> =>
  JSON.parse(res.body.toString("utf8")) as Record<string, unknown>

/** The service on port 0 with its database behind `proxy`, in `schema`, seeded, with a cheap password hash. */
const behindProxy = (
  adapter: AccordConfig["adapter"],
  proxy: TcpProxy,
  schema: string,
  seedFile: string
): AccordConfig => ({
  ...defaultConfig,
  adapter,
  port: 0,
  store: "postgres",
  databaseUrl: Redacted.make(viaProxy(url, proxy)),
  databaseSchema: schema,
  seedFile,
  scrypt: { N: 1024, r: 8, p: 1 }
})

/** Polls `check` every 25 ms until it returns true; fails after `timeoutMs` (a bound for what never comes) saying what it waited for. */
const waitUntil = async (what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up after ${timeoutMs} ms waiting until ${what}`)
    await delay(25)
  }
}

const expectUnavailable = (label: string, res: RawResponse): void => {
  expect(res.status, `${label}: ${res.body.toString("utf8")}`).toBe(503)
  expect(res.headers["content-type"], label).toBe("application/problem+json; charset=utf-8")
  expect(res.headers["retry-after"], label).toMatch(/^[1-9][0-9]*$/)
  expect(body(res), label).toEqual({
    type: "about:blank",
    title: "Service Unavailable",
    status: 503,
    detail: expect.any(String),
    code: "unavailable"
  })
}

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? `database outage behind a TCP proxy (${skipReason})`
    : "database outage behind a TCP proxy",
  () => {
    let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined
    let seedFile = ""
    beforeAll(async () => {
      temp = await makeTempDir()
      seedFile = await temp.write("seed.json", seed)
    })
    afterAll(() => temp?.cleanup())

    it.each(["fastify", "koa"] as const)(
      "%s: during a cut every route but liveness is 503 unavailable with Retry-After (readiness too); afterwards the same process serves again and no acknowledged write is lost",
      async (adapter) => {
        const database = new URL(url)
        const proxy = await startTcpProxy({ host: database.hostname, port: Number(database.port || 5432) })
        const schema = freshSchema()
        const lines: Array<string> = []
        let accord: RunningAccord | undefined
        let writing = true
        let writer: Promise<void> = Promise.resolve()
        try {
          accord = await startAccord(behindProxy(adapter, proxy, schema, seedFile), {
            logger: createLogger("info", { write: (line: string) => void lines.push(line) })
          })
          const base = accord.url
          const call = (request: RawRequest) => send(base, { timeoutMs: 10_000, ...request })

          // Acknowledged before the cut.
          expect(
            (
              await call({
                method: "PUT",
                path: paths.preferences,
                headers: asUserJson,
                body: '{"language":"pt-BR","timezone":60}'
              })
            ).status
          ).toBe(200)
          expect((await call({ method: "PUT", path: paths.paymentMethod(pmB), headers: asUser })).status).toBe(200)

          // A writer that keeps creating plan entries across the cut; only 201 and a proper 503 are acceptable.
          const acknowledged: Array<string> = []
          const statuses = new Map<number, number>()
          const unexpected: Array<string> = []
          writer = (async () => {
            for (let index = 0; writing; index++) {
              const email = `w${index}.${run}@example.com`
              try {
                const res = await call(postEntry(email))
                statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
                if (res.status === 201) acknowledged.push(email)
                else expectUnavailable(`writer ${email}`, res)
              } catch (error) {
                unexpected.push(String(error))
              }
              await delay(5)
            }
          })()
          await waitUntil("the writer has an acknowledged write", async () => acknowledged.length > 0)

          await proxy.stop()
          // The pool notices its dead connections within a few ticks; from then on nothing reaches the database.
          await waitUntil(
            "health reports the outage",
            async () => (await call({ method: "GET", path: paths.health })).status === 503
          )
          for (const request of everyRoute)
            expectUnavailable(`${request.method} ${request.path} during the cut`, await call(request))
          // Liveness never asks the database: the process is alive, so an orchestrator must not restart it.
          const live = await call({ method: "GET", path: paths.live })
          expect(live.status, live.body.toString("utf8")).toBe(200)
          expect(body(live)).toEqual({ status: "ok" })
          const acknowledgedDuringCut = acknowledged.length
          await waitUntil("the writer saw the outage", async () => (statuses.get(503) ?? 0) > 0)

          const acceptedBefore = proxy.accepted()
          await proxy.start()
          await waitUntil(
            "health recovers",
            async () => (await call({ method: "GET", path: paths.health })).status === 200
          )
          expect(proxy.accepted(), "the pool opened new connections").toBeGreaterThan(acceptedBefore)

          // The same process, never restarted, serves again, with what was acknowledged before the cut.
          const before = await call({ method: "GET", path: paths.paymentMethods, headers: asUser })
          const defaults = (body(before)["data"] as ReadonlyArray<Record<string, unknown>>).filter(
            (method) => method["is_default"]
          )
          expect(defaults.map((method) => method["id"])).toEqual([pmB])
          expect(body(await call({ method: "GET", path: paths.preferences, headers: asUser }))).toMatchObject({
            language: "pt-BR",
            timezone: 60
          })
          const responses = await Promise.all(everyRoute.map(call))
          expect(responses.map((res) => res.status)).toEqual([200, 200, 200, 200, 200, 200, 201])
          await waitUntil(
            "the writer has an acknowledged write after the cut",
            async () => acknowledged.length > acknowledgedDuringCut
          )
          writing = false
          await writer
          expect(unexpected).toEqual([])
          expect([...statuses.keys()].sort()).toEqual([201, 503])

          // Everything acknowledged is there: through the API, and in the tables.
          const preferences = body(await call({ method: "GET", path: paths.preferences, headers: asUser }))
          expect(preferences).toMatchObject({ language: "pt-BR", timezone: 120 })
          const methods = body(await call({ method: "GET", path: paths.paymentMethods, headers: asUser }))[
            "data"
          ] as ReadonlyArray<Record<string, unknown>>
          expect(methods.map((method) => [method["id"], method["is_default"]])).toEqual([
            [pmA, false],
            [pmB, false],
            [pmC, true]
          ])
          const stored = await adminQuery(url, `SELECT email FROM "${schema}".plan_entries WHERE email = ANY($1)`, [
            acknowledged
          ])
          expect(stored.rows.map((row: { email: string }) => row.email).sort()).toEqual([...acknowledged].sort())

          const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
          expect(logged.filter((line) => line["msg"] === "request" && line["status"] === 503).length).toBeGreaterThan(0)
          expect(logged.filter((line) => line["status"] === 500 || line["msg"] === "internal error")).toEqual([])
        } finally {
          writing = false
          await writer
          await accord?.close()
          await proxy.stop()
          await dropSchema(url, schema)
        }
      },
      120_000
    )
  }
)

/**
 * The query timeout the stall cases run with (the default is 5 s). A stalled database never answers, so any answer
 * at all is a timeout's; the tests check which one by its cause and by the order of events, never by the clock.
 */
const QUERY_TIMEOUT_MS = 1500

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined
    ? `a stalled database behind a TCP proxy (${skipReason})`
    : 'a stalled database behind a TCP proxy (docs/operations.md, "Database timeouts")',
  () => {
    let temp: Awaited<ReturnType<typeof makeTempDir>> | undefined
    let seedFile = ""
    const database = new URL(url || "postgres://127.0.0.1:5432")
    const target = { host: database.hostname, port: Number(database.port || 5432) }
    const cleanups: Array<() => Promise<void>> = []
    beforeAll(async () => {
      buildServer()
      temp = await makeTempDir()
      seedFile = await temp.write("seed.json", seed)
    }, 120_000)
    afterAll(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup()
      await temp?.cleanup()
    })

    /** A proxy in front of the database, and a fresh schema, both removed after the suite. */
    const proxyAndSchema = async (): Promise<{ readonly proxy: TcpProxy; readonly schema: string }> => {
      const proxy = await startTcpProxy(target)
      const schema = freshSchema()
      // Run in reverse: the proxy goes first, with the connections it still holds to the schema.
      cleanups.push(
        () => dropSchema(url, schema),
        () => proxy.stop()
      )
      return { proxy, schema }
    }

    /** The service in this process, its database behind a proxy, with a short query timeout. */
    const startBehindProxy = async (adapter: AccordConfig["adapter"]) => {
      const { proxy, schema } = await proxyAndSchema()
      const lines: Array<string> = []
      const accord = await startAccord(
        { ...behindProxy(adapter, proxy, schema, seedFile), databaseQueryTimeoutMs: QUERY_TIMEOUT_MS },
        { logger: createLogger("info", { write: (line: string) => void lines.push(line) }) }
      )
      cleanups.push(() => accord.close())
      const call = (request: RawRequest) => send(accord.url, { timeoutMs: 20_000, ...request })
      const logged = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>)
      return { proxy, call, logged }
    }

    const timedCall = async (call: (request: RawRequest) => Promise<RawResponse>, request: RawRequest) => {
      const started = performance.now()
      const res = await call(request)
      return { request, res, ms: performance.now() - started }
    }

    it.each(["fastify", "koa"] as const)(
      "%s: every route but liveness answers 503 unavailable at the query timeout, on open connections and new ones",
      async (adapter) => {
        const { proxy, call, logged } = await startBehindProxy(adapter)
        // The pool's connections open first, so the stall catches statements on them.
        const reads = everyRoute.filter((request) => request.method !== "POST")
        expect((await Promise.all(reads.map(call))).map((res) => res.status)).toEqual(reads.map(() => 200))

        proxy.stall()
        // First on the open connections, then on new ones whose handshake is never answered.
        for (let round = 0; round < 2; round++) {
          const results = await Promise.all(
            everyRoute.map((request) =>
              timedCall(call, request.method === "POST" ? postEntry(`stall${round}.${run}@example.com`) : request)
            )
          )
          for (const { request, res, ms } of results) {
            const label = `${request.method} ${request.path}, round ${round}`
            expectUnavailable(label, res)
            // Answered by the query timeout, not before it: the stall holds every statement until then.
            expect(ms, label).toBeGreaterThanOrEqual(QUERY_TIMEOUT_MS - 50)
          }
        }
        // Liveness asks no store: 200 while every statement still stalls (a store-bound probe would be 503).
        expect((await call({ method: "GET", path: paths.live })).status).toBe(200)
        expect(logged().filter((line) => line["status"] === 500 || line["msg"] === "internal error")).toEqual([])
      },
      30_000
    )

    it("after a failover (open connections dead, new ones fine) each client fails at most twice, then is served again", async () => {
      const { proxy, call } = await startBehindProxy("fastify")
      const list: RawRequest = { method: "GET", path: paths.paymentMethods, headers: asUser }
      // The pool's ten connections open and idle, as a busy service has them between requests.
      expect(
        new Set((await Promise.all(Array.from({ length: 20 }, () => call(list)))).map((res) => res.status))
      ).toEqual(new Set([200]))

      proxy.stall()
      proxy.resume()
      // Two clients, one request after another each, until ten in a row succeed. Without the suspect connections
      // replaced at checkout, each of the ten dead ones would cost a request its timeout: up to ten failures.
      const client = async (): Promise<{ readonly failures: number; readonly succeededInARow: number }> => {
        let failures = 0
        let succeededInARow = 0
        for (let sent = 0; sent < 40 && succeededInARow < 10; sent++) {
          const res = await call(list)
          if (res.status === 200) succeededInARow += 1
          else {
            expectUnavailable("during the failover", res)
            failures += 1
            succeededInARow = 0
          }
          await delay(20)
        }
        return { failures, succeededInARow }
      }
      const clients = await Promise.all([client(), client()])
      const failures = clients.reduce((sum, outcome) => sum + outcome.failures, 0)
      expect(failures, "a dead connection was found at all").toBeGreaterThanOrEqual(1)
      for (const outcome of clients) {
        expect(outcome.failures).toBeLessThanOrEqual(2)
        expect(outcome.succeededInARow).toBe(10)
      }
    }, 60_000)

    it("SIGTERM ends the process at the drain limit while the database, and the rate limit's, stall with requests waiting", async () => {
      const { proxy, schema } = await proxyAndSchema()
      const DRAIN_MS = 2000
      const cli: Cli = spawnCli([
        "--port",
        "0",
        "--store",
        "postgres",
        "--database-url",
        viaProxy(url, proxy),
        "--database-schema",
        schema,
        // The longest there is: the requests still wait on the database when the drain limit comes, and a shutdown
        // that waited for the stores would not end within this test's time-out.
        "--database-query-timeout-ms",
        "600000",
        "--drain-timeout-ms",
        String(DRAIN_MS),
        "--rate-limit-capacity",
        "100",
        "--rate-limit-refill-per-second",
        "100",
        "--rate-limit-store",
        "postgres",
        "--seed",
        seedFile
      ])
      cleanups.push(async () => {
        if (cli.child.exitCode === null && cli.child.signalCode === null) cli.child.kill("SIGKILL")
        await cli.exited
      })
      const base = await cli.listening
      const list: RawRequest = { method: "GET", path: paths.paymentMethods, headers: asUser, timeoutMs: 20_000 }
      expect((await send(base, list)).status).toBe(200)

      proxy.stall()
      const waiting = Array.from({ length: 3 }, () => send(base, list).then((res) => res.status, String))
      await delay(700)
      cli.child.kill("SIGTERM")
      expect(await cli.exited).toEqual({ code: 0, signal: null })
      // Ended by the drain limit, the waiting requests cut off unanswered, the stores not waited for.
      const drainLimit = cli
        .logLines()
        .find((line) => line["msg"] === "drain limit reached; closing the connections still open")
      expect(drainLimit).toMatchObject({ unanswered: 3 })
      for (const outcome of await Promise.all(waiting)) expect(outcome).not.toBe(503)
    }, 40_000)
  }
)
