import { existsSync, readFileSync } from "node:fs"
import { chmod, chown, cp, mkdir, readdir, rm, stat, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { PGlite } from "@electric-sql/pglite"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { PasswordHasher, PlanEntries } from "@accord/domain"
import { fillFileSystem, mountTmpfs, tmpfsUnavailable } from "@accord/test-support"
import { auditTarget, httpAudits, runAudits } from "@accord/conformance/audits"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { DATA_DIR_LOCK_FILE, PgliteStoreLive, runMigrateCli } from "@accord/store-postgres"
import { createLogger } from "../src/logger.js"
import { storeFullLogging } from "../src/throttled-log.js"
import {
  bearer,
  buildServer,
  CLIENT_TOKEN,
  makeTempDir,
  OTHER_USER_TOKEN,
  repoRoot,
  spawnCli,
  stopped,
  testSeed,
  USER_TOKEN,
  type Cli
} from "./cli-helpers.js"
import { newSecret, ok, startReceiver } from "./webhook-receiver.js"

// `--store pglite --data-dir DIR`: the PostgreSQL store on PGlite, kept on disk by one process (README "Options",
// docs/operations.md "The PGlite store"). Each test spawns the compiled CLI on a directory of its own.

let temp: Awaited<ReturnType<typeof makeTempDir>>
let seedPath = ""
/** A directory as the first start leaves it (created, initialised, migrated), copied by each test. */
let template = ""
/** What that first start logged. */
let firstStart: ReadonlyArray<Record<string, unknown>> = []

/** Every server a test started: one a failed test left running is killed after it. */
const started = new Set<Cli>()

const track = (cli: Cli): Cli => {
  started.add(cli)
  void cli.exited.then(() => started.delete(cli))
  return cli
}

/** Warnings and errors only: every request's log line would only slow a busy machine down. */
const startPglite = (dataDir: string, more: ReadonlyArray<string> = [], env: Record<string, string> = {}): Cli =>
  track(spawnCli(["--store", "pglite", "--data-dir", dataDir, "--port", "0", ...more], { LOG_LEVEL: "warn", ...env }))

const killLeftovers = () => Promise.all([...started].map((cli) => stopped(cli, "SIGKILL")))
afterEach(killLeftovers)

beforeAll(async () => {
  buildServer()
  temp = await makeTempDir()
  seedPath = await temp.write("seed.json", testSeed)
  // The first start on a directory runs PGlite's initdb, many seconds on a busy machine: once here, through the CLI
  // (a path that does not exist yet is created), and each test gets a copy, as a backup would be made.
  template = join(temp.dir, "template", "data")
  const first = startPglite(template, [], { LOG_LEVEL: "info" })
  await first.listening
  expect(await stopped(first)).toEqual({ code: 0, signal: null })
  firstStart = first.logLines()
}, 180_000)
afterAll(async () => {
  await killLeftovers()
  await temp.cleanup()
})

/** A data directory of its own for a test: a copy of the template, so a stopped server's directory restored. */
const dataDirFor = async (name: string): Promise<string> => {
  const dataDir = join(temp.dir, name)
  await cp(template, dataDir, { recursive: true })
  return dataDir
}

const paths = (url: string) => ({
  preferences: `${url}/api/users/v1/preferences/language/`,
  paymentMethods: `${url}/api/payments/v1/payment-methods/`,
  paymentMethod: (id: string) => `${url}/api/payments/v1/payment-methods/${id}/`,
  planEntries: `${url}/api/plans/v1/subscription-plans/public/`
})

const put = (url: string, token: string, body?: unknown) =>
  fetch(url, {
    method: "PUT",
    headers: { ...bearer(token), ...(body !== undefined && { "content-type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) })
  })

const post = (url: string, token: string, body: unknown) =>
  fetch(url, {
    method: "POST",
    headers: { ...bearer(token), "content-type": "application/json" },
    body: JSON.stringify(body)
  })

const getJson = async (url: string, token: string): Promise<unknown> => {
  const response = await fetch(url, { headers: bearer(token) })
  expect(response.status, url).toBe(200)
  return response.json()
}

interface Method {
  readonly id: string
  readonly is_default: boolean
}

const methodsOf = async (url: string, token: string) =>
  ((await getJson(paths(url).paymentMethods, token)) as { data: ReadonlyArray<Method> }).data

const lockFile = (dataDir: string) => join(dataDir, DATA_DIR_LOCK_FILE)

describe("accord --store pglite", () => {
  it("as the README runs it: keeps what it wrote across a restart (preferences, default payment method, plan entry)", async () => {
    const dataDir = await dataDirFor("restart")
    // The root README's line, on this test's directory and a free port; seed.json is the repository's.
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
    const line = /^npm start -- (--store pglite --data-dir \.pglite-data .*)$/m.exec(readme)?.[1]
    expect(line, "the README's --store pglite line").toBeDefined()
    const args = [...(line ?? "").replace(".pglite-data", dataDir).split(" "), "--port", "0"]
    const start = () => track(spawnCli(args, { LOG_LEVEL: "warn" }))
    const seed = JSON.parse(readFileSync(join(repoRoot, "seed.json"), "utf8")) as typeof testSeed
    const [userToken = "", otherUserToken = ""] = seed.users.map((entry) => entry.token)
    const clientToken = seed.clients[0]?.token ?? ""
    const email = "Ada.Lovelace@Example.COM"
    const firstPassword = "first-Passw0rd-kept"
    const secondPassword = "second-Passw0rd-ignored"

    const first = start()
    const before = paths(await first.listening)
    const written = await put(before.preferences, userToken, { language: "fr-CA", timezone: 60, mfa_enabled: true })
    expect(written.status).toBe(200)
    const preferences: unknown = await written.json()
    expect((await put(before.paymentMethod("pm_2"), userToken)).status).toBe(200)
    const methods = await methodsOf(await first.listening, userToken)
    expect(methods.map((method) => [method.id, method.is_default])).toEqual([
      ["pm_1", false],
      ["pm_2", true]
    ])
    const created = await post(before.planEntries, clientToken, { email, password: firstPassword })
    expect(created.status).toBe(201)
    const createdBody = await created.text()
    expect(readFileSync(lockFile(dataDir), "utf8")).toBe(`${first.child.pid}\n`)
    expect(await stopped(first)).toEqual({ code: 0, signal: null })
    expect(existsSync(lockFile(dataDir))).toBe(false)

    // Again with the same seed, which says pm_1 is the default: a seed never changes a row that exists.
    const second = start()
    const url = await second.listening
    const after = paths(url)
    expect(await getJson(after.preferences, userToken)).toEqual(preferences)
    expect(await methodsOf(url, userToken)).toEqual(methods)
    // The other user's data, untouched by both runs, came back too.
    expect((await methodsOf(url, otherUserToken)).map((method) => [method.id, method.is_default])).toEqual([
      ["pm_3", false]
    ])
    // A duplicate: the same 201 a new entry gets, and the first password stays (checked in the directory below).
    const duplicate = await post(after.planEntries, userToken, { email, password: secondPassword })
    expect(duplicate.status).toBe(201)
    expect(await duplicate.text()).toBe(createdBody)
    expect(await stopped(second)).toEqual({ code: 0, signal: null })

    // The directory itself, opened here once the server has let it go.
    const runtime = ManagedRuntime.make(
      Layer.merge(PgliteStoreLive({ dataDir }), ScryptPasswordHasherLive(testScryptCost))
    )
    try {
      const stored = await runtime.runPromise(
        Effect.gen(function* () {
          const entry = yield* Effect.flatMap(PlanEntries, (entries) => entries.findByEmailKey(email.toLowerCase()))
          if (entry === undefined) return undefined
          const hasher = yield* PasswordHasher
          return {
            email: entry.email,
            first: yield* hasher.verify(Redacted.make(firstPassword), entry.passwordHash),
            second: yield* hasher.verify(Redacted.make(secondPassword), entry.passwordHash)
          }
        })
      )
      expect(stored).toEqual({ email: "Ada.Lovelace@example.com", first: true, second: false })
    } finally {
      await runtime.dispose()
    }
  }, 120_000)

  it("refuses a second process on the same directory (exit 2, one line), and the first one keeps serving", async () => {
    const dataDir = await dataDirFor("owned")
    const owner = startPglite(dataDir, ["--seed", seedPath])
    const url = await owner.listening
    // Errors only: the line is all it prints.
    const second = startPglite(dataDir, [], { LOG_LEVEL: "error" })
    // A second writer that starts fails the test at once, rather than at its time limit.
    expect(await Promise.race([second.exited, second.listening])).toEqual({ code: 2, signal: null })
    expect(second.stdout()).toBe("")
    expect(second.stderr()).toBe(
      `accord: the data directory ${dataDir} is in use by process ${owner.child.pid}: one process at a time owns it ` +
        `(if no such process runs, remove ${lockFile(dataDir)})\n`
    )
    expect(readFileSync(lockFile(dataDir), "utf8")).toBe(`${owner.child.pid}\n`)
    expect((await put(paths(url).paymentMethod("pm_2"), USER_TOKEN)).status).toBe(200)
    expect(await stopped(owner)).toEqual({ code: 0, signal: null })
  }, 60_000)

  it("refuses --workers 2 before it touches the directory (exit 2, one line)", async () => {
    const dataDir = join(temp.dir, "workers")
    const cli = startPglite(dataDir, ["--workers", "2"])
    expect(await cli.exited).toEqual({ code: 2, signal: null })
    expect(cli.stderr()).toBe(
      "accord: --workers (WORKERS) 2 needs --store postgres: one process at a time owns a PGlite data directory\n"
    )
    expect(existsSync(dataDir)).toBe(false)
  })

  it("passes every audit of the contract (accord-conformance's runner)", async () => {
    const dataDir = await dataDirFor("conformance")
    // CORS on for any origin, so that the CORS audits run too.
    const cli = startPglite(dataDir, ["--seed", seedPath, "--cors-origin", "*"])
    const target = auditTarget({
      url: `${await cli.listening}/api`,
      userToken: USER_TOKEN,
      otherUserToken: OTHER_USER_TOKEN,
      clientToken: CLIENT_TOKEN,
      userPaymentMethods: ["pm_1", "pm_2"],
      otherUserPaymentMethods: ["pm_3"],
      corsOrigin: "https://app.example"
    })
    const results = await runAudits(httpAudits, target)
    expect(await stopped(cli)).toEqual({ code: 0, signal: null })
    expect(results.filter((result) => result.status === "fail")).toEqual([])
    // Skipped: only the audits that need a store their runner seeded itself (users no request has used).
    expect(results.filter((result) => result.status === "skip").map((result) => result.id)).toEqual(
      httpAudits.filter((audit) => audit.needs.includes("seeded")).map((audit) => audit.id)
    )
  }, 120_000)
})

// ---------------------------------------------------------------------------------------------------------------
// kill -9 in the middle of concurrent writes.

const LANGUAGES = ["en", "fr-CA", "de-DE", "ja", "pt-BR", "es-419", "zh-Hant-TW"] as const

/**
 * Write number n of a user's preferences. All three fields follow from the timezone, so a record holding fields of
 * two different writes shows as incoherent.
 */
const preferencesOf = (n: number) => {
  const step = n % 105
  return { language: LANGUAGES[step % LANGUAGES.length], timezone: step * 15 - 720, mfa_enabled: step % 2 === 1 }
}

interface StoredPreferences {
  readonly language: string
  readonly timezone: number
  readonly mfa_enabled: boolean
}

const fieldsOf = ({ language, timezone, mfa_enabled }: StoredPreferences) => ({ language, timezone, mfa_enabled })

/** Whether the record is exactly one write's three fields. */
const isOneWrite = (stored: StoredPreferences) => {
  const step = (stored.timezone + 720) / 15
  return (
    Number.isInteger(step) &&
    step >= 0 &&
    step < 105 &&
    JSON.stringify(fieldsOf(stored)) === JSON.stringify(preferencesOf(step))
  )
}

const fail = (what: string): never => {
  throw new Error(`no ${what}`)
}

/** What one user's writes reached: the last acknowledged and the one in flight when the server died. */
interface Ledger {
  acked: number
  preferences: { acked?: number; inFlight?: number }
  defaults: { acked?: string; inFlight?: string }
}

const writers = Array.from({ length: 12 }, (_, index) => ({
  id: `w_${index}`,
  token: `pglite-kill-writer-token-${index}`,
  methods: [`pm_w${index}_a`, `pm_w${index}_b`, `pm_w${index}_c`]
}))
const contended = { id: "w_hot", token: "pglite-kill-contended-token", methods: ["pm_hot_a", "pm_hot_b", "pm_hot_c"] }
const killSeed = {
  users: [...writers, contended].map(({ id, token }) => ({ id, token })),
  payment_methods: [...writers, contended].flatMap(({ id, methods }) =>
    methods.map((method, index) => ({ id: method, user_id: id, is_default: index === 0 }))
  )
}

/**
 * One writer's user, one request at a time (so the order of its writes is known), alternating a preferences PUT
 * and a set-default, until the server dies under it.
 */
const writeUntilKilled = async (url: string, writer: (typeof writers)[number], ledger: Ledger, firstWrite: number) => {
  const api = paths(url)
  try {
    for (let n = firstWrite; ; n++) {
      ledger.preferences.inFlight = n
      const written = await put(api.preferences, writer.token, preferencesOf(n))
      expect(written.status).toBe(200)
      await written.arrayBuffer()
      ledger.preferences = { acked: n }
      const id = writer.methods[n % writer.methods.length] ?? ""
      ledger.defaults.inFlight = id
      const chosen = await put(api.paymentMethod(id), writer.token)
      expect(chosen.status).toBe(200)
      await chosen.arrayBuffer()
      ledger.defaults = { acked: id }
      ledger.acked += 2
    }
  } catch (error) {
    // The server was killed: a refused or cut connection. Anything else is a failure of the test.
    if (!(error instanceof TypeError)) throw error
  }
}

/** Many requests at once on one user, both kinds, in no known order. */
const contendUntilKilled = async (url: string, worker: number) => {
  const api = paths(url)
  try {
    for (let n = worker; ; n += 7) {
      const [written, chosen] = await Promise.all([
        put(api.preferences, contended.token, preferencesOf(n)),
        put(api.paymentMethod(contended.methods[n % contended.methods.length] ?? ""), contended.token)
      ])
      await Promise.all([written.arrayBuffer(), chosen.arrayBuffer()])
    }
  } catch (error) {
    if (!(error instanceof TypeError)) throw error
  }
}

/** Every writer's user reads back its last acknowledged write, or the one in flight at the kill, never a mix. */
const checkAfterRestart = async (url: string, ledgers: ReadonlyMap<string, Ledger>) => {
  for (const writer of writers) {
    const ledger = ledgers.get(writer.id)
    const stored = (await getJson(paths(url).preferences, writer.token)) as StoredPreferences
    expect(isOneWrite(stored), JSON.stringify(stored)).toBe(true)
    const allowed = [ledger?.preferences.acked, ledger?.preferences.inFlight].flatMap((n) =>
      n === undefined ? [] : [preferencesOf(n)]
    )
    expect(allowed, writer.id).toContainEqual(fieldsOf(stored))
    const defaults = (await methodsOf(url, writer.token))
      .filter((method) => method.is_default)
      .map((method) => method.id)
    expect(defaults, writer.id).toHaveLength(1)
    expect([ledger?.defaults.acked, ledger?.defaults.inFlight], writer.id).toContain(defaults[0])
  }
  const hot = (await getJson(paths(url).preferences, contended.token)) as StoredPreferences
  expect(isOneWrite(hot), JSON.stringify(hot)).toBe(true)
  expect((await methodsOf(url, contended.token)).filter((method) => method.is_default)).toHaveLength(1)
}

describe("accord --store pglite: its first start, and its events", () => {
  const INITIALISING = "initialising a new PGlite database in the data directory; the first start takes a while"

  it("the first start on a directory says it is initialising, before it listens; a later start does not", async () => {
    const messages = firstStart.map((line) => line["msg"])
    expect(messages.indexOf(INITIALISING)).toBeGreaterThanOrEqual(0)
    expect(messages.indexOf(INITIALISING)).toBeLessThan(messages.indexOf("listening"))
    const again = startPglite(await dataDirFor("second-start"), [], { LOG_LEVEL: "info" })
    await again.listening
    expect(await stopped(again)).toEqual({ code: 0, signal: null })
    expect(again.logLines().map((line) => line["msg"])).not.toContain(INITIALISING)
  }, 120_000)

  it("delivers every event past the first batch, one recorded while its receiver was down once it is back, and none twice after a restart", async () => {
    // Issue 35: on PGlite the relay's first settlement was refused (an array parameter), which ended it unlogged:
    // 7 or 8 of 10 delivered, then nothing, and a restart sent the first batch again.
    const dataDir = await dataDirFor("webhooks")
    const secret = newSecret()
    let receiver = await startReceiver([secret], ok)
    const port = receiver.port
    const args = [
      "--seed",
      seedPath,
      "--webhook-url",
      receiver.url,
      "--events-poll-ms",
      "10",
      "--events-backoff-ms",
      "10",
      "--metrics-port",
      "0"
    ]
    const start = () => startPglite(dataDir, args, { WEBHOOK_SECRET: secret, LOG_LEVEL: "info" })
    const metricsOf = async (cli: Cli) => {
      const listening = cli.logLines().find((line) => line["msg"] === "listening")
      return (await fetch(`${String(listening?.["metricsUrl"])}/metrics`)).text()
    }
    const first = start()
    const url = await first.listening
    for (let index = 1; index <= 20; index++)
      expect((await put(paths(url).preferences, USER_TOKEN, { timezone: 15 * index })).status).toBe(200)
    await receiver.until(() => receiver.deliveries.length === 20)
    await receiver.close()
    expect((await put(paths(url).preferences, USER_TOKEN, { timezone: -15 })).status).toBe(200)
    await first.logged("event delivery failed; retrying")
    const delivered = receiver.deliveries.map((delivery) => delivery.id)
    receiver = await startReceiver([secret], ok, port)
    await receiver.until(() => receiver.deliveries.length === 1)
    expect(await metricsOf(first)).toMatch(/^accord_events\{status="pending"\} 0$/m)
    expect(await metricsOf(first)).toMatch(/^accord_events\{status="delivered"\} 21$/m)
    expect(await stopped(first)).toEqual({ code: 0, signal: null })

    // Nothing pending: the next start sends only what is new.
    const second = start()
    const again = await second.listening
    expect((await put(paths(again).preferences, USER_TOKEN, { timezone: -30 })).status).toBe(200)
    await receiver.until(() => receiver.deliveries.length === 2)
    expect(await stopped(second)).toEqual({ code: 0, signal: null })
    await receiver.close()
    const all = [...delivered, ...receiver.deliveries.map((delivery) => delivery.id)]
    expect(new Set(all).size).toBe(22)
    expect(all).toHaveLength(22)
    expect(receiver.unverified).toEqual([])
  }, 120_000)
})

describe("accord-migrate replay-events --data-dir", () => {
  const run = async (argv: ReadonlyArray<string>) => {
    const out: Array<string> = []
    const err: Array<string> = []
    const code = await runMigrateCli(argv, {}, { out: (line) => out.push(line), err: (line) => err.push(line) })
    return { code, out: out.join("\n"), err: err.join("\n") }
  }

  it("refuses a directory that does not exist, and creates nothing", async () => {
    const missing = join(temp.dir, "no-such-data-dir")
    const result = await run(["replay-events", "--data-dir", missing])
    expect(result.code).toBe(2)
    expect(result.err).toContain(`no database in ${missing}; nothing was created`)
    expect(existsSync(missing)).toBe(false)
  })

  it("puts a PGlite directory's failed deliveries back to pending; refused while a server holds it", async () => {
    const dataDir = await dataDirFor("replay")
    const secret = newSecret()
    const refusing = await startReceiver([secret], (_request, response) => response.writeHead(500).end())
    // Given up after a second of refusals.
    const server = startPglite(
      dataDir,
      [
        "--seed",
        seedPath,
        "--webhook-url",
        refusing.url,
        "--events-retry-for-s",
        "1",
        "--events-backoff-ms",
        "10",
        "--events-poll-ms",
        "10"
      ],
      { WEBHOOK_SECRET: secret }
    )
    const url = await server.listening
    expect((await put(paths(url).preferences, USER_TOKEN, { timezone: 600 })).status).toBe(200)
    await server.logged("event delivery given up")
    const held = await run(["replay-events", "--data-dir", dataDir])
    expect(held.code).toBe(1)
    expect(held.err).toContain(`is in use by process ${server.child.pid}`)
    expect(await stopped(server)).toEqual({ code: 0, signal: null })
    await refusing.close()
    expect(await run(["replay-events", "--data-dir", dataDir])).toEqual({
      code: 0,
      out: "1 failed event pending again",
      err: ""
    })
    expect(await run(["replay-events", "--data-dir", dataDir])).toMatchObject({
      code: 0,
      out: "0 failed events pending again"
    })
  }, 120_000)
})

describe("accord --store pglite killed with SIGKILL during concurrent writes", () => {
  it("restarts on the same directory with every acknowledged write and the invariants intact, twice", async () => {
    const dataDir = await dataDirFor("killed")
    const seed = await temp.write("kill-seed.json", killSeed)
    let cli = startPglite(dataDir, ["--seed", seed])
    let url = await cli.listening
    let firstWrite = 1
    for (const round of [1, 2]) {
      const ledgers = new Map(
        writers.map((writer): [string, Ledger] => [writer.id, { acked: 0, preferences: {}, defaults: {} }])
      )
      const writing = [
        ...writers.map((writer) =>
          writeUntilKilled(url, writer, ledgers.get(writer.id) ?? fail(writer.id), firstWrite)
        ),
        ...Array.from({ length: 7 }, (_, worker) => contendUntilKilled(url, worker))
      ]
      // Killed once every writer has had a few writes acknowledged, with a request of each in flight.
      const enough = () => [...ledgers.values()].every((ledger) => ledger.acked >= 6)
      while (!enough()) await new Promise((resolve) => setTimeout(resolve, 10))
      cli.child.kill("SIGKILL")
      expect(await cli.exited, `round ${round}`).toEqual({ code: null, signal: "SIGKILL" })
      await Promise.all(writing)
      // Its lock file stays behind, naming a process that no longer runs: the next start takes it over.
      expect(readFileSync(lockFile(dataDir), "utf8")).toBe(`${cli.child.pid}\n`)

      cli = startPglite(dataDir)
      url = await cli.listening
      await checkAfterRestart(url, ledgers)
      firstWrite =
        Math.max(
          ...[...ledgers.values()].map((ledger) => ledger.preferences.inFlight ?? ledger.preferences.acked ?? 0)
        ) + 1
    }
    // And it writes on as before.
    expect((await put(paths(url).paymentMethod("pm_w0_b"), "pglite-kill-writer-token-0")).status).toBe(200)
    expect(await stopped(cli)).toEqual({ code: 0, signal: null })
  }, 180_000)
})

// ---------------------------------------------------------------------------------------------------------------
// Directories it must not take (docs/SECURITY.md, items 34 and 35).

const isRoot = process.getuid?.() === 0
/** A uid that is not this process's (root's): only root can give a directory to it. */
const OTHER_UID = 1000

const modeOf = async (path: string) => (await stat(path)).mode & 0o777

describe("accord --store pglite refuses a data directory it must not take (exit 2, one line, the directory untouched)", () => {
  it("a directory that is not empty and holds no database, e.g. a project's", async () => {
    const dataDir = join(temp.dir, "project")
    await mkdir(join(dataDir, "src"), { recursive: true, mode: 0o755 })
    await chmod(dataDir, 0o755)
    await writeFile(join(dataDir, "README.md"), "# a project\n")
    const cli = startPglite(dataDir, [], { LOG_LEVEL: "error" })
    // One that starts fails the test at once, rather than at its time limit.
    expect(await Promise.race([cli.exited, cli.listening])).toEqual({ code: 2, signal: null })
    expect(cli.stdout()).toBe("")
    expect(cli.stderr()).toBe(
      `accord: the data directory ${dataDir} is not empty (2 entries) and holds no database (no PG_VERSION): ` +
        "initdb refuses such a directory too; choose a new or empty directory\n"
    )
    expect((await readdir(dataDir)).sort()).toEqual(["README.md", "src"])
    expect(await modeOf(dataDir)).toBe(0o755)
  })

  it.skipIf(!isRoot)(
    "a database owned by another user, as PostgreSQL refuses one (root only, to chown it: skipped otherwise)",
    async () => {
      const dataDir = await dataDirFor("another-users")
      await chmod(dataDir, 0o750)
      await chown(dataDir, OTHER_UID, OTHER_UID)
      const cli = startPglite(dataDir, [], { LOG_LEVEL: "error" })
      expect(await Promise.race([cli.exited, cli.listening])).toEqual({ code: 2, signal: null })
      expect(cli.stderr()).toBe(
        `accord: the data directory ${dataDir} is owned by uid ${OTHER_UID}, not by this process (uid 0): ` +
          "PostgreSQL refuses such a directory too; chown it or choose another\n"
      )
      expect(await modeOf(dataDir)).toBe(0o750)
      expect(existsSync(lockFile(dataDir))).toBe(false)
    }
  )
})

// ---------------------------------------------------------------------------------------------------------------
// A full disk (docs/SECURITY.md, item 36): 503 unavailable with Retry-After, one warning per 30 s, nothing lost.

const STORE_FULL = "the store has no room left; requests that need it answer 503 until it has"

describe("storeFullLogging", () => {
  it("warns at once, then at most once per interval with the count it did not log, in the failure's own words", () => {
    const lines: Array<Record<string, unknown>> = []
    const logger = createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line)) })
    let now = 0
    const log = storeFullLogging(
      logger,
      (error) => (error instanceof Error ? error.message : ""),
      30_000,
      () => now
    )
    const full = Object.assign(new Error("No space left on device"), { params: ["ada@example.com", "scrypt$hash"] })
    for (now = 0; now < 30_000; now += 100) log(full)
    now = 30_000
    log(full)
    expect(lines.map((line) => [line["level"], line["msg"], line["error"], line["failuresNotLogged"]])).toEqual([
      [40, STORE_FULL, "No space left on device", 0],
      [40, STORE_FULL, "No space left on device", 299]
    ])
    // Never the error object: PGlite's carries the statement's parameters.
    expect(JSON.stringify(lines)).not.toContain("ada@example.com")
  })
})

/**
 * PostgreSQL's own full-disk error (SQLSTATE 53100, as PGlite raises it when a table cannot grow), raised by a trigger
 * on the plan entries whose email starts with "full".
 */
const DISK_FULL_ON_SOME_ENTRIES = `
  CREATE FUNCTION accord_test_disk_full() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    RAISE EXCEPTION 'could not extend file "base/5/16385": No space left on device' USING ERRCODE = 'disk_full';
  END $$;
  CREATE TRIGGER disk_full BEFORE INSERT ON plan_entries
    FOR EACH ROW WHEN (NEW.email_key LIKE 'full%') EXECUTE FUNCTION accord_test_disk_full();
`

/** Runs SQL on a data directory no server holds, as an operator's psql would. */
const onDirectory = async <A>(dataDir: string, work: (db: PGlite) => Promise<A>): Promise<A> => {
  const db = await PGlite.create({ dataDir })
  try {
    return await work(db)
  } finally {
    await db.close()
  }
}

/** Every stderr line: the store-full warnings, and what else there is besides request lines. */
const linesOf = (cli: Cli) => {
  const lines = cli.logLines()
  return {
    warnings: lines.filter((line) => line["msg"] === STORE_FULL),
    internalErrors: lines.filter((line) => line["msg"] === "internal error"),
    stacks: lines.filter((line) => JSON.stringify(line).includes("    at ")),
    requests: lines.filter((line) => line["msg"] === "request")
  }
}

const expectUnavailable = async (response: Response) => {
  expect(response.status).toBe(503)
  expect(response.headers.get("retry-after")).toBe("1")
  expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/)
  expect(await response.json()).toMatchObject({ status: 503, code: "unavailable" })
}

describe("accord --store pglite when the store has no room (SQLSTATE 53100)", () => {
  it("answers 503 unavailable with Retry-After, never 500, warns once with no stack, and serves everything else", async () => {
    const dataDir = await dataDirFor("disk-full-trigger")
    await onDirectory(dataDir, (db) => db.exec(DISK_FULL_ON_SOME_ENTRIES))
    const cli = startPglite(dataDir, ["--seed", seedPath])
    const url = await cli.listening
    const api = paths(url)
    expect(
      (await post(api.planEntries, CLIENT_TOKEN, { email: "kept@example.com", password: "a-Passw0rd-kept" })).status
    ).toBe(201)
    for (let n = 0; n < 20; n++) {
      await expectUnavailable(
        await post(api.planEntries, CLIENT_TOKEN, { email: `full-${n}@example.com`, password: "a-Passw0rd-full" })
      )
    }
    // Reads and other writes are served: only the statement that needed room failed.
    expect((await put(api.paymentMethod("pm_2"), USER_TOKEN)).status).toBe(200)
    expect((await fetch(`${url}/api/health/ready`)).status).toBe(200)
    expect(await stopped(cli)).toEqual({ code: 0, signal: null })

    const { warnings, internalErrors, stacks, requests } = linesOf(cli)
    expect(internalErrors).toEqual([])
    expect(stacks).toEqual([])
    // The 20 answers' request lines (a 5xx is logged at warn), and one warning for all of them.
    expect(requests.filter((line) => line["status"] === 503)).toHaveLength(20)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatchObject({
      level: 40,
      error: 'could not extend file "base/5/16385": No space left on device (53100)',
      failuresNotLogged: 0
    })
  }, 60_000)
})

const tmpfsSkipReason = tmpfsUnavailable()

/**
 * Makes every preferences write also write 256 KiB of WAL (a logical message, which changes no table), so that a few
 * dozen writes fill the WAL's 16 MiB segment: the next one is a new file of that size.
 */
const WAL_PADDING_ON_PREFERENCES = `
  CREATE FUNCTION accord_test_pad_wal() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_logical_emit_message(false, 'accord-test', repeat('x', 262144));
    RETURN NEW;
  END $$;
  CREATE TRIGGER pad_wal BEFORE UPDATE ON preferences FOR EACH ROW EXECUTE FUNCTION accord_test_pad_wal();
`

/** The answer `attempt` gives once it is not `status` any more, trying every 100 ms, at most `tries` times. */
const untilNot = async (status: number, tries: number, attempt: () => Promise<Response>): Promise<Response> => {
  for (let tried = 1; ; tried++) {
    const response = await attempt()
    if (response.status !== status || tried >= tries) return response
    await response.arrayBuffer()
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe("accord --store pglite on a disk that fills up (a 96 MiB tmpfs)", () => {
  it.skipIf(tmpfsSkipReason !== undefined)(
    `answers 503 with Retry-After while it is full (warning once per 30 s), and once space is freed writes again with nothing lost${
      tmpfsSkipReason === undefined ? "" : ` (skipped: ${tmpfsSkipReason}; needs root and mount -t tmpfs)`
    }`,
    async () => {
      const disk = mountTmpfs("96m")
      const mountPoint = disk.path
      try {
        const dataDir = join(mountPoint, "data")
        await cp(template, dataDir, { recursive: true })
        // What is stored before the disk fills: a plan entry, and the user's preferences.
        const before = startPglite(dataDir, ["--seed", seedPath])
        let api = paths(await before.listening)
        const email = "stored.before@example.com"
        expect((await post(api.planEntries, CLIENT_TOKEN, { email, password: "a-Passw0rd-kept" })).status).toBe(201)
        expect((await put(api.preferences, USER_TOKEN, preferencesOf(1))).status).toBe(200)
        expect(await stopped(before)).toEqual({ code: 0, signal: null })

        await onDirectory(dataDir, (db) => db.exec(WAL_PADDING_ON_PREFERENCES))
        const cli = startPglite(dataDir)
        const url = await cli.listening
        api = paths(url)
        // Another program fills the disk up to 40 MiB: writes go on until the WAL's next 16 MiB segment takes the
        // free space below the 32 MiB floor. Without it, a later segment finds no room: PostgreSQL's PANIC, and PGlite
        // spinning for ever in a COMMIT.
        const fillers = [join(mountPoint, "filler-1"), join(mountPoint, "filler-2")]
        fillFileSystem(fillers[0] ?? "", 40 * 1024 * 1024)
        let acknowledged = 1
        let refused: Response | undefined
        for (let n = 2; n < 500 && refused === undefined; n++) {
          const response = await put(api.preferences, USER_TOKEN, preferencesOf(n))
          if (response.status === 200) {
            await response.arrayBuffer()
            acknowledged = n
          } else {
            refused = response
          }
        }
        if (refused === undefined) throw new Error("500 writes (128 MiB of WAL) with 40 MiB free, and no refusal")
        const outageStarted = performance.now()
        expect(acknowledged).toBeGreaterThan(1)
        await expectUnavailable(refused)
        // Then full to its last block: every route that needs the database answers 503, at once.
        fillFileSystem(fillers[1] ?? "")
        await expectUnavailable(await fetch(`${url}/api/health/ready`))
        for (let n = 0; n < 20; n++) {
          await expectUnavailable(await put(api.preferences, USER_TOKEN, preferencesOf(acknowledged + 1)))
          await expectUnavailable(await fetch(api.preferences, { headers: bearer(USER_TOKEN) }))
        }
        expect((await fetch(`${url}/api/health/live`)).status).toBe(200)

        // Room again: what was acknowledged is read back, and writes are served.
        await Promise.all(fillers.map((filler) => rm(filler)))
        const read = await untilNot(503, 100, () => fetch(api.preferences, { headers: bearer(USER_TOKEN) }))
        const outageMs = performance.now() - outageStarted
        expect(read.status).toBe(200)
        expect(fieldsOf((await read.json()) as StoredPreferences)).toEqual(preferencesOf(acknowledged))
        expect((await put(api.preferences, USER_TOKEN, preferencesOf(acknowledged + 1))).status).toBe(200)
        expect(await stopped(cli)).toEqual({ code: 0, signal: null })

        const { warnings, internalErrors, stacks } = linesOf(cli)
        expect(internalErrors).toEqual([])
        expect(stacks).toEqual([])
        // The first failure at once, then at most one per 30 s of the outage, however many requests failed.
        expect(warnings.length).toBeGreaterThanOrEqual(1)
        expect(warnings.length).toBeLessThanOrEqual(1 + Math.floor(outageMs / 30_000))
        expect(warnings[0]?.["error"]).toMatch(
          /^\d+ MiB free on the data directory's file system, less than the 32 MiB PGlite needs to write safely \(ENOSPC\)$/
        )

        // And on disk: the plan entry from before, the last write, opened once the server has let the directory go.
        const stored = await onDirectory(dataDir, async (db) => ({
          entry: (await db.query("SELECT email FROM plan_entries WHERE email_key = $1", [email])).rows,
          preferences: (await db.query("SELECT language, timezone, mfa_enabled FROM preferences WHERE user_id = 'u_1'"))
            .rows
        }))
        expect(stored).toEqual({ entry: [{ email }], preferences: [preferencesOf(acknowledged + 1)] })
      } finally {
        await killLeftovers()
        disk.unmount()
      }
    },
    180_000
  )
})
