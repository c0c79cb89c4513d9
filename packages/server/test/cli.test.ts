import { SIGNAL_REPEAT_WINDOW_MS } from "@accord/node/stop-signals"
import { join } from "node:path"
import { setTimeout as delay } from "node:timers/promises"
import { describe, expect, it } from "@effect/vitest"
import {
  bearer,
  CLIENT_TOKEN,
  healthRequest,
  openConnection,
  OTHER_USER_TOKEN,
  spawnCli,
  stopped,
  testSeed,
  USER_TOKEN,
  useBuiltServerAndSeed
} from "./cli-helpers.js"
import { databaseUrl, dropSchema, freshSchema, unansweredReason } from "./postgres-helpers.js"

const PASSWORD = "cli-test-Passw0rd-never-logged"
const postgresSkipped = await unansweredReason()
const suite = useBuiltServerAndSeed()

const json = { "content-type": "application/json" }

describe.each(["fastify", "koa", "express", "fetch"] as const)("accord CLI with --adapter %s", (adapter) => {
  it("prints one listening line, serves the seed, logs JSON lines without secrets, and exits 0 on SIGTERM", async () => {
    const cli = spawnCli(["--adapter", adapter, "--port", "0", "--seed", suite.seedPath])
    const url = await cli.listening
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9][0-9]*$/)
    const api = `${url}/api`

    const health = await fetch(`${api}/health`)
    expect(health.status).toBe(200)
    expect(await health.json()).toEqual({ status: "ok" })

    const list = await fetch(`${api}/payments/v1/payment-methods/`, {
      headers: { ...bearer(USER_TOKEN), "x-request-id": "cli-list-1" }
    })
    expect(list.status).toBe(200)
    const listed = (await list.json()) as { data: Array<{ id: string; is_default: boolean }> }
    expect(listed.data.map((method) => [method.id, method.is_default])).toEqual([
      ["pm_1", true],
      ["pm_2", false]
    ])

    const setDefault = await fetch(`${api}/payments/v1/payment-methods/pm_2/`, {
      method: "PUT",
      headers: bearer(USER_TOKEN)
    })
    expect(setDefault.status).toBe(200)
    expect(await setDefault.json()).toMatchObject({ id: "pm_2", is_default: true })

    const othersMethod = await fetch(`${api}/payments/v1/payment-methods/pm_3/`, {
      method: "PUT",
      headers: bearer(USER_TOKEN)
    })
    expect(othersMethod.status).toBe(404)

    const plan = await fetch(`${api}/plans/v1/subscription-plans/public/`, {
      method: "POST",
      headers: { ...bearer(CLIENT_TOKEN), ...json },
      body: JSON.stringify({ email: "ada@Example.com", password: PASSWORD })
    })
    expect(plan.status).toBe(201)
    expect(await plan.json()).toEqual({ email: "ada@example.com", password: "********" })

    const preferences = await fetch(`${api}/users/v1/preferences/language/`, {
      method: "PUT",
      headers: { ...bearer(OTHER_USER_TOKEN), ...json },
      body: JSON.stringify({ language: "EN-us", timezone: 60 })
    })
    expect(preferences.status).toBe(200)
    expect(await preferences.json()).toMatchObject({ language: "en-US", timezone: 60, mfa_enabled: false })

    const unknownToken = await fetch(`${api}/users/v1/preferences/language/`, { headers: bearer("not-a-seeded-token") })
    expect(unknownToken.status).toBe(401)

    const docs = await fetch(`${api}/docs`)
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toMatch(/^text\/html/)

    expect(await stopped(cli)).toEqual({ code: 0, signal: null })
    expect(cli.stdout()).toBe(`listening on ${url}\n`)
    // The start-up line names the Node that runs the server: the one npm scripts run, Node 22 or newer (README).
    const listeningLine = cli.logLines().find((line) => line["msg"] === "listening")
    expect(listeningLine?.["node"]).toBe(process.version)
    expect(Number(process.versions.node.split(".")[0])).toBeGreaterThanOrEqual(22)

    const lines = cli.logLines()
    const requests = lines.filter((line) => line["msg"] === "request")
    expect(requests).toHaveLength(8)
    for (const line of requests) {
      expect(Object.keys(line)).toEqual(
        expect.arrayContaining(["requestId", "method", "route", "status", "durationMs"])
      )
      expect(typeof line["durationMs"]).toBe("number")
    }
    expect(requests.find((line) => line["requestId"] === "cli-list-1")).toMatchObject({
      method: "GET",
      route: "/api/payments/v1/payment-methods/",
      status: 200
    })
    expect(requests.map((line) => line["status"])).toEqual([200, 200, 200, 404, 201, 200, 401, 200])
    expect(
      lines.some(
        (line) => line["msg"] === "seed loaded" && line["credentialsAdded"] === 3 && line["paymentMethodsAdded"] === 3
      )
    ).toBe(true)

    for (const secret of [USER_TOKEN, OTHER_USER_TOKEN, CLIENT_TOKEN, PASSWORD])
      expect(cli.stderr()).not.toContain(secret)
  })

  it("answers a request on an accepted connection whose body arrives during the drain, then exits 0", async () => {
    const cli = spawnCli(["--adapter", adapter, "--port", "0", "--seed", suite.seedPath])
    const connection = await openConnection(await cli.listening)
    // One complete exchange first: from then on the connection is certainly accepted.
    connection.send(healthRequest)
    await connection.received('{"status":"ok"}')
    const body = JSON.stringify({ mfa_enabled: true })
    connection.send(
      "PUT /api/users/v1/preferences/language/ HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
        `Authorization: Bearer ${USER_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n` +
        body.slice(0, 5)
    )
    cli.child.kill("SIGTERM")
    await cli.logged("draining")
    connection.send(body.slice(5))
    const exchanged = await connection.closed
    // A body ends without a newline, so the next status line may follow it directly.
    const answers = exchanged.match(/HTTP\/1\.1 \d{3}/g)
    expect(answers).toEqual(["HTTP/1.1 200", "HTTP/1.1 200"])
    expect(exchanged).toContain('"mfa_enabled":true')
    expect(await cli.exited).toEqual({ code: 0, signal: null })
  })

  it("exits 0 on SIGINT too", async () => {
    const cli = spawnCli(["--adapter", adapter, "--port", "0"])
    await cli.listening
    expect(await stopped(cli, "SIGINT")).toEqual({ code: 0, signal: null })
    expect(cli.logLines().some((line) => line["msg"] === "stopped")).toBe(true)
  })
})

describe("accord CLI start-up", () => {
  it("takes its options from the environment", async () => {
    const cli = spawnCli([], { ADAPTER: "koa", PORT: "0", SEED_FILE: suite.seedPath, LOG_LEVEL: "warn" })
    const url = await cli.listening
    const list = await fetch(`${url}/api/payments/v1/payment-methods/`, { headers: bearer(OTHER_USER_TOKEN) })
    expect(((await list.json()) as { data: Array<{ id: string }> }).data.map((method) => method.id)).toEqual(["pm_3"])
    expect(await stopped(cli)).toEqual({ code: 0, signal: null })
    // LOG_LEVEL=warn: the low scrypt cost warning, and no request lines.
    expect(cli.logLines().map((line) => line["msg"])).toEqual([
      "scrypt cost is below the production default (N=32768, r=8, p=3)"
    ])
  })

  it("exits 2 naming the problem when the seed file is bad, without printing its tokens", async () => {
    const bad = {
      ...testSeed,
      payment_methods: [...testSeed.payment_methods, { id: "pm_4", user_id: "u_1", is_default: true }]
    }
    const cli = spawnCli(["--port", "0", "--seed", await suite.temp.write("two-defaults.json", bad)])
    expect(await cli.exited).toEqual({ code: 2, signal: null })
    expect(cli.stderr()).toContain('payment_methods[3].is_default: user "u_1" already has a default payment method')
    expect(cli.stdout()).toBe("")
    for (const secret of [USER_TOKEN, OTHER_USER_TOKEN, CLIENT_TOKEN]) expect(cli.stderr()).not.toContain(secret)
  })

  it("exits 2 when the seed file is missing", async () => {
    const cli = spawnCli(["--port", "0", "--seed", "does-not-exist.json"])
    expect(await cli.exited).toEqual({ code: 2, signal: null })
    expect(cli.stderr()).toBe("accord: seed file does-not-exist.json: not found\n")
  })

  it("exits 2 on a bad flag, naming it", async () => {
    const cli = spawnCli(["--adapter", "hapi", "--port", "0"])
    expect(await cli.exited).toEqual({ code: 2, signal: null })
    expect(cli.stderr()).toContain('--adapter (ADAPTER) must be one of koa, fastify, express, fetch, got "hapi"')
    expect(cli.stdout()).toBe("")
  })

  it("exits 2 on a bad environment variable, naming it", async () => {
    const cli = spawnCli([], { PORT: "eighty" })
    expect(await cli.exited).toEqual({ code: 2, signal: null })
    expect(cli.stderr()).toContain('--port (PORT) must be an integer from 0 to 65535, got "eighty"')
  })

  it("prints usage on --help and exits 0", async () => {
    const cli = spawnCli(["--help"])
    expect(await cli.exited).toEqual({ code: 0, signal: null })
    expect(cli.stdout()).toMatch(/^Usage: accord \[options\]/)
    expect(cli.stdout()).toContain("--adapter koa|fastify|express|fetch")
  })

  it("exits 1 with a clear message when the port is taken", async () => {
    const first = spawnCli(["--port", "0"])
    const port = new URL(await first.listening).port
    const second = spawnCli(["--port", port, "--adapter", "koa"])
    expect(await second.exited).toEqual({ code: 1, signal: null })
    expect(second.stderr()).toContain(`accord: cannot listen on 127.0.0.1:${port}`)
    expect(second.stderr()).toContain("EADDRINUSE")
    expect(await stopped(first)).toEqual({ code: 0, signal: null })
  })

  it("exits 1 when the postgres store cannot be reached, without echoing the URL's password", async () => {
    const cli = spawnCli([
      "--port",
      "0",
      "--store",
      "postgres",
      "--database-url",
      "postgres://postgres:hunter2-pw@127.0.0.1:1/test"
    ])
    expect(await cli.exited).toEqual({ code: 1, signal: null })
    expect(cli.stderr()).toContain("accord: cannot start the postgres store: store unreachable")
    expect(cli.stderr()).toContain("ECONNREFUSED")
    expect(cli.stderr() + cli.stdout()).not.toContain("hunter2-pw")
    // The password shows in the process list: one warning says so and names the variable (docs/SECURITY.md, item 39).
    const warnings = cli
      .stderr()
      .split("\n")
      .filter((line) => line.includes("carries a password"))
      .map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(warnings.map((line) => [line["level"], line["msg"]])).toEqual([
      [40, "--database-url carries a password: it shows in the process list; pass it in DATABASE_URL instead"]
    ])
  })

  it("closes what is left at --drain-timeout-ms and still exits 0", async () => {
    const cli = spawnCli(["--port", "0", "--seed", suite.seedPath, "--drain-timeout-ms", "300"])
    const connection = await openConnection(await cli.listening)
    connection.send(healthRequest)
    await connection.received('{"status":"ok"}')
    // The body never completes, so only the drain limit can end this request.
    connection.send(
      "PUT /api/users/v1/preferences/language/ HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
        `Authorization: Bearer ${USER_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`
    )
    cli.child.kill("SIGTERM")
    expect(await cli.exited).toEqual({ code: 0, signal: null })
    await connection.closed
    expect(cli.logLines().some((line) => line["msg"] === "stopped")).toBe(true)
  })

  it("exits at once on a second signal a second or more into the drain (128 + signal number)", async () => {
    const cli = spawnCli(["--port", "0", "--seed", suite.seedPath])
    const url = await cli.listening
    const connection = await openConnection(url)
    connection.send(healthRequest)
    await connection.received('{"status":"ok"}')
    // A request whose body never completes keeps the drain waiting (up to the 10 s default).
    connection.send(
      "PUT /api/users/v1/preferences/language/ HTTP/1.1\r\nHost: 127.0.0.1\r\n" +
        `Authorization: Bearer ${USER_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`
    )
    cli.child.kill("SIGTERM")
    await cli.logged("draining")
    // One within the window would be the same stop by another route (signal-routes.test.ts): this one comes after it.
    await delay(SIGNAL_REPEAT_WINDOW_MS * 1.5)
    cli.child.kill("SIGTERM")
    expect(await cli.exited).toEqual({ code: 143, signal: null })
    expect(cli.logLines().map((line) => line["msg"])).toContain("second signal, exiting without finishing the drain")
    connection.destroy()
  })
})

describe("the first start", () => {
  const emptyStore = (line: Record<string, unknown>) =>
    line["level"] === 40 && String(line["msg"]).startsWith("the store is empty")

  it("with no seed, one warning says the store is empty and how to seed it; with a seed, none", async () => {
    const bare = spawnCli(["--port", "0"])
    await bare.listening
    expect(await stopped(bare)).toEqual({ code: 0, signal: null })
    const warnings = bare.logLines().filter(emptyStore)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]?.["msg"]).toContain("--seed")

    const seeded = spawnCli(["--port", "0", "--seed", suite.seedPath])
    await seeded.listening
    expect(await stopped(seeded)).toEqual({ code: 0, signal: null })
    expect(seeded.logLines().filter(emptyStore)).toEqual([])
  })

  /** Starts with `args`, stops, and returns the empty-store warnings it logged. */
  const emptyStoreWarnings = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
    const cli = spawnCli(["--port", "0", ...args], env)
    await cli.listening
    expect(await stopped(cli)).toEqual({ code: 0, signal: null })
    return cli.logLines().filter(emptyStore)
  }

  it("on PGlite: one warning for a new directory with no seed; none once seeded, even restarted without the seed", async () => {
    const pglite = ["--store", "pglite", "--data-dir", join(suite.temp.dir, "empty-store-pglite")]
    expect(await emptyStoreWarnings(pglite)).toHaveLength(1)
    expect(await emptyStoreWarnings([...pglite, "--seed", suite.seedPath])).toEqual([])
    expect(await emptyStoreWarnings(pglite)).toEqual([])
  }, 180_000)

  describe.skipIf(postgresSkipped !== undefined)(
    `on PostgreSQL${postgresSkipped === undefined ? "" : ` (${postgresSkipped})`}`,
    () => {
      it("one warning for a new schema with no seed; none once seeded, even restarted without the seed", async () => {
        const url = databaseUrl ?? ""
        const schema = freshSchema()
        const postgres = ["--store", "postgres", "--database-schema", schema]
        const warningsOf = (args: ReadonlyArray<string>) =>
          emptyStoreWarnings([...postgres, ...args], { DATABASE_URL: url })
        try {
          expect(await warningsOf([])).toHaveLength(1)
          expect(await warningsOf(["--seed", suite.seedPath])).toEqual([])
          expect(await warningsOf([])).toEqual([])
        } finally {
          await dropSchema(url, schema)
        }
      }, 120_000)
    }
  )
})
