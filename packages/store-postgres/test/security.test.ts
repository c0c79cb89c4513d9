import { createHash, timingSafeEqual } from "node:crypto"
import { PGlite } from "@electric-sql/pglite"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
// vi from "vitest" itself: vitest hoists vi.mock only when it comes from there.
import { vi } from "vitest"
import { Effect, Layer, ManagedRuntime, Redacted, Schema } from "effect"
import {
  Authenticator,
  createPublicPlanEntry,
  Email,
  emailKey,
  PasswordHasher,
  PlanEntries,
  Seed,
  StoreAdmin,
  Unauthenticated
} from "@accord/domain"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { makePgliteExecutor, SqlStoreLive, type SqlExecutor } from "@accord/store-postgres"

// The store's only constant-time primitive, spied on (and still doing its work) to see that authentication uses it.
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>()
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) }
})

// docs/SECURITY.md: what store-postgres writes to the database of credentials and passwords, read back with SQL
// (the same statements run on PGlite and on a PostgreSQL server).

const userToken = "security-user-token.5d0c3e"
const clientToken = "security-client-token.a71f42"
const password = "the same password for both"
const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

let db: PGlite
let executor: SqlExecutor
let runtime: ManagedRuntime.ManagedRuntime<Authenticator | PlanEntries | StoreAdmin | PasswordHasher, unknown>

beforeAll(async () => {
  db = await PGlite.create()
  executor = await Effect.runPromise(makePgliteExecutor(db))
  runtime = ManagedRuntime.make(Layer.merge(SqlStoreLive(executor), ScryptPasswordHasherLive(testScryptCost)))
  const seed = Schema.decodeUnknownSync(Seed)({
    users: [{ id: "u_security", token: userToken }],
    clients: [{ id: "security_client", token: clientToken }],
    payment_methods: [{ id: "pm_security", user_id: "u_security", is_default: true }]
  })
  await runtime.runPromise(
    Effect.gen(function* () {
      yield* (yield* StoreAdmin).loadSeed(seed)
      yield* createPublicPlanEntry({ email: Email.make("first@example.com"), password: Redacted.make(password) })
      yield* createPublicPlanEntry({ email: Email.make("second@example.com"), password: Redacted.make(password) })
    })
  )
}, 120_000)
afterAll(async () => {
  await runtime.dispose()
  await db.close()
})

/** Every row of every table the migrations made, as JSON text: what a database dump would show. */
const dumpDatabase = async (): Promise<string> => {
  const tables = await Effect.runPromise(
    executor.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY table_name"
    )
  )
  const dump: Record<string, unknown> = {}
  for (const row of tables) {
    const name = String((row as { table_name: unknown }).table_name)
    dump[name] = await Effect.runPromise(executor.query(`SELECT * FROM "${name}"`))
  }
  expect(Object.keys(dump)).toEqual(
    expect.arrayContaining(["credentials", "plan_entries", "payment_methods", "preferences"])
  )
  return JSON.stringify(dump)
}

describe("store-postgres security (PGlite)", () => {
  it("keeps tokens only as SHA-256 digests: no seeded token in any table", async () => {
    const text = await dumpDatabase()
    for (const token of [userToken, clientToken]) {
      expect(text).not.toContain(token)
      expect(text).toContain(sha256(token))
    }
    const columns = await Effect.runPromise(
      executor.query(
        "SELECT column_name FROM information_schema.columns WHERE table_name = 'credentials' ORDER BY column_name"
      )
    )
    expect(columns.map((row) => (row as { column_name: unknown }).column_name)).toEqual([
      "kind",
      "principal_id",
      "token_digest"
    ])
  })

  it("compares the stored digest with timingSafeEqual when a token is known", async () => {
    const spy = vi.mocked(timingSafeEqual)
    spy.mockClear()
    const principal = await runtime.runPromise(
      Effect.flatMap(Authenticator, (authenticator) => authenticator.authenticate(clientToken))
    )
    expect(principal).toMatchObject({ _tag: "Client", clientId: "security_client" })
    expect(spy).toHaveBeenCalledTimes(1)
    const [left, right] = spy.mock.calls[0] ?? []
    expect([left?.byteLength, right?.byteLength]).toEqual([32, 32])
    const refused = await runtime.runPromise(
      Effect.flip(Effect.flatMap(Authenticator, (authenticator) => authenticator.authenticate(`${clientToken}x`)))
    )
    expect(refused).toEqual(new Unauthenticated({ reason: "invalid_token" }))
  })

  it("stores passwords only as scrypt hashes, each with its own random salt", async () => {
    expect(await dumpDatabase()).not.toContain(password)
    const hashes = await runtime.runPromise(
      Effect.gen(function* () {
        const entries = yield* PlanEntries
        const hasher = yield* PasswordHasher
        const found = [
          yield* entries.findByEmailKey(emailKey(Email.make("first@example.com"))),
          yield* entries.findByEmailKey(emailKey(Email.make("second@example.com")))
        ]
        const hashes = found.map((entry) => entry?.passwordHash)
        for (const hash of hashes) {
          if (hash === undefined) throw new Error("a plan entry was not stored")
          expect(yield* hasher.verify(Redacted.make(password), hash)).toBe(true)
        }
        return hashes.map(String)
      })
    )
    const parts = hashes.map((hash) => hash.split("$"))
    for (const [scheme, N, r, p, salt, key] of parts) {
      expect([scheme, N, r, p]).toEqual([
        "scrypt",
        String(testScryptCost.N),
        String(testScryptCost.r),
        String(testScryptCost.p)
      ])
      expect(Buffer.from(salt ?? "", "base64")).toHaveLength(16)
      expect(Buffer.from(key ?? "", "base64")).toHaveLength(32)
    }
    expect(parts[0]?.[4]).not.toBe(parts[1]?.[4])
    expect(parts[0]?.[5]).not.toBe(parts[1]?.[5])
  })
})
