import { existsSync, readFileSync } from "node:fs"
import { chmod, chown, cp, mkdir, readdir, stat, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Redacted } from "effect"
import { PasswordHasher, PlanEntries } from "@accord/core"
import { auditTarget, httpAudits, runAudits } from "@accord/conformance/audits"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node"
import { DATA_DIR_LOCK_FILE, PgliteStoreLive } from "@accord/store-postgres"
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

// `--store pglite --data-dir DIR`: the PostgreSQL store on PGlite, kept on disk by one process (README "Options",
// docs/operations.md "The PGlite store"). Each test spawns the compiled CLI on a directory of its own.

let temp: Awaited<ReturnType<typeof makeTempDir>>
let seedPath = ""
/** A directory as the first start leaves it (created, initialised, migrated), copied by each test. */
let template = ""

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
  const first = startPglite(template)
  await first.listening
  expect(await stopped(first)).toEqual({ code: 0, signal: null })
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
    const cli = startPglite(dataDir, ["--seed", seedPath])
    const target = auditTarget({
      url: `${await cli.listening}/api`,
      userToken: USER_TOKEN,
      otherUserToken: OTHER_USER_TOKEN,
      clientToken: CLIENT_TOKEN,
      userPaymentMethods: ["pm_1", "pm_2"],
      otherUserPaymentMethods: ["pm_3"]
    })
    const results = await runAudits(httpAudits, target)
    expect(await stopped(cli)).toEqual({ code: 0, signal: null })
    expect(results.filter((result) => result.status === "fail")).toEqual([])
    // Skipped: only the audits that need a store their runner seeded itself (users no request has used).
    expect(results.filter((result) => result.status === "skip").map((result) => result.id)).toHaveLength(5)
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
