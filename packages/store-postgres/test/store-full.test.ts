import { rmSync } from "node:fs"
import { join } from "node:path"
import { PGlite } from "@electric-sql/pglite"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { LanguageTag, PlanEntries, PreferencesStore, Unavailable, UserId } from "@accord/domain"
import { fillFileSystem, mountTmpfs, tmpfsUnavailable } from "@accord/test-support"
import { makePgliteExecutor, SqlStoreLive, type PgliteDatabase } from "@accord/store-postgres"
import { diskFullTriggers, entryOf, isDiskFull } from "./disk-full.js"

// A full disk is the store being unavailable (docs/SECURITY.md, item 36; docs/operations.md, "The PGlite store"):
// Unavailable(store_full), a 503 with Retry-After, never a defect.

const userId = UserId.make("u_full")
const now = new Date("2030-01-01T00:00:01.000Z")

/** A PGlite database in memory, closed with the scope. */
const inMemory = Effect.acquireRelease(
  Effect.promise(() => PGlite.create()),
  (db) => Effect.promise(() => db.close())
)

describe("makePgliteExecutor on a full disk", () => {
  it.live(
    "a statement failing with SQLSTATE 53100 is Unavailable(store_full), told to onStoreFull, rolled back; the store serves on",
    () =>
      Effect.gen(function* () {
        const db = yield* inMemory
        const told: Array<unknown> = []
        const executor = yield* makePgliteExecutor(db, { onStoreFull: (cause) => told.push(cause) })
        const context = yield* Layer.build(SqlStoreLive(executor))
        yield* Effect.promise(() => db.exec(diskFullTriggers()))
        const { entries, preferences } = yield* Effect.provide(
          Effect.all({ entries: PlanEntries, preferences: PreferencesStore }),
          context
        )

        const kept = entryOf("kept@example.com")
        expect(yield* entries.insertIfAbsent(kept, [])).toBe(true)
        const stored = yield* preferences.update(userId, { set: { language: LanguageTag.make("fr-CA") }, at: now })

        // An INSERT, an UPSERT (the preferences merge), and a compare-and-set (a conditional merge: a read, then UPDATE).
        const insert = yield* Effect.exit(entries.insertIfAbsent(entryOf("full@example.com"), []))
        const merge = { set: { language: LanguageTag.make("de-DE"), mfaEnabled: true }, at: now }
        const update = yield* Effect.exit(preferences.update(userId, merge))
        const conditional = yield* Effect.exit(preferences.update(userId, merge, () => true))
        for (const exit of [insert, update, conditional]) {
          expect(exit).toMatchObject(
            Exit.fail(new Unavailable({ reason: "store_full", retryAfterSeconds: 1, cause: expect.anything() }))
          )
        }
        expect(told).toHaveLength(3)
        expect(told.every(isDiskFull)).toBe(true)

        // Nothing of the failed writes, everything of the earlier ones; and the next writes are served.
        expect(yield* entries.findByEmailKey("full@example.com")).toBeUndefined()
        expect(yield* entries.findByEmailKey("kept@example.com")).toEqual(kept)
        expect(yield* preferences.getOrCreate(userId, now)).toEqual(stored)
        const after = yield* preferences.update(userId, { set: { language: LanguageTag.make("ja") }, at: now })
        expect(after.language).toBe("ja")
        expect(yield* entries.insertIfAbsent(entryOf("after@example.com"), [])).toBe(true)
      }).pipe(Effect.scoped),
    60_000
  )
})

/** A PGlite crash: what PGlite rejects with when the WAL cannot grow on a full disk (measured on a tiny tmpfs). */
const panic = Object.assign(new Error('could not write to file "pg_wal/xlogtemp.42": No space left on device'), {
  severity: "PANIC",
  code: "53100"
})

/**
 * A stand-in database that answers `rows` to every statement, or rejects with `failWith` once it is set; it records
 * the statements it was given and whether it was closed.
 */
const standIn = (name: string) => {
  const state = {
    statements: [] as Array<string>,
    closed: false,
    failWith: undefined as unknown
  }
  const db: PgliteDatabase = {
    query: (text) => {
      state.statements.push(text)
      return state.failWith === undefined ? Promise.resolve({ rows: [{ name }] }) : Promise.reject(state.failWith)
    },
    close: () => {
      state.closed = true
      return Promise.resolve()
    }
  }
  return { db, state }
}

describe("makePgliteExecutor after a crash (PANIC: the WAL could not grow)", () => {
  it.effect(
    "never gives the crashed database another statement, answers Unavailable, and reopens it at most once per interval",
    () =>
      Effect.gen(function* () {
        const first = standIn("first")
        const second = standIn("second")
        const told: Array<unknown> = []
        let reopened = 0
        const executor = yield* makePgliteExecutor(first.db, {
          onStoreFull: (cause) => told.push(cause),
          // Longer than the test: only the first attempt after the crash runs.
          reopenIntervalMs: 60_000,
          reopen: () => {
            reopened += 1
            return Promise.reject(new Error("PGlite failed to initialize properly"))
          }
        })
        expect(yield* executor.query("SELECT 1")).toEqual([{ name: "first" }])

        // The crash, inside a transaction: Unavailable(store_full), no ROLLBACK sent, the database closed.
        first.state.failWith = panic
        const crashed = yield* Effect.exit(executor.transaction((tx) => tx.query("INSERT 1")))
        expect(crashed).toEqual(
          Exit.fail(new Unavailable({ reason: "store_full", retryAfterSeconds: 1, cause: panic }))
        )
        expect(first.state.statements).toEqual(["SELECT 1", "BEGIN"])
        expect(first.state.closed).toBe(true)

        // The next statement tries to reopen (it fails: still full), the ones after it wait for the interval.
        for (let attempt = 0; attempt < 3; attempt++) {
          expect(yield* Effect.flip(executor.query("SELECT 1"))).toMatchObject({
            _tag: "Unavailable",
            reason: "store_full"
          })
        }
        expect(reopened).toBe(1)
        expect(first.state.statements).toEqual(["SELECT 1", "BEGIN"])
        expect(told).toHaveLength(4)
        expect(second.state.statements).toEqual([])
      })
  )

  it.effect("once reopened, serves from the new database, transactions included", () =>
    Effect.gen(function* () {
      const first = standIn("first")
      const second = standIn("second")
      let reopenFails = true
      const executor = yield* makePgliteExecutor(first.db, {
        reopenIntervalMs: 0,
        reopen: () =>
          reopenFails ? Promise.reject(new Error("5 MiB free; reopening needs 32 MiB")) : Promise.resolve(second.db)
      })
      first.state.failWith = panic
      yield* Effect.flip(executor.query("INSERT 1"))
      expect(yield* Effect.flip(executor.query("SELECT 1"))).toMatchObject({ reason: "store_full" })
      reopenFails = false
      expect(yield* executor.query("SELECT 1")).toEqual([{ name: "second" }])
      expect(yield* executor.transaction((tx) => tx.query("INSERT 2"))).toEqual([{ name: "second" }])
      expect(second.state.statements).toEqual(["SELECT 1", "BEGIN", "INSERT 2", "COMMIT"])
      expect(first.state.statements).toEqual(["INSERT 1"])
    })
  )

  it.effect("without reopen (a database in memory), every statement after a crash is Unavailable", () =>
    Effect.gen(function* () {
      const only = standIn("only")
      const executor = yield* makePgliteExecutor(only.db)
      only.state.failWith = Object.assign(new Error("terminating connection"), { severity: "FATAL", code: "XX000" })
      expect(yield* Effect.flip(executor.query("SELECT 1"))).toMatchObject({ reason: "store_unreachable" })
      expect(yield* Effect.flip(executor.query("SELECT 1"))).toMatchObject({ reason: "store_unreachable" })
      expect(only.state.statements).toEqual(["SELECT 1"])
      expect(only.state.closed).toBe(true)
    })
  )
})

const tmpfsSkipReason = tmpfsUnavailable()

/** A tmpfs of `size`, mounted for the scope. */
const tmpfs = (size: string) =>
  Effect.acquireRelease(
    Effect.sync(() => mountTmpfs(size)),
    (disk) => Effect.sync(disk.unmount)
  )

describe("makePgliteExecutor when PGlite crashes on a real full disk (a tmpfs)", () => {
  it.live.skipIf(tmpfsSkipReason !== undefined)(
    `the PANIC is Unavailable(store_full), the crashed instance is closed and never queried (it would spin), and once ` +
      `there is room the database is reopened with every committed row${
        tmpfsSkipReason === undefined ? "" : ` (skipped: ${tmpfsSkipReason}; needs root and mount -t tmpfs)`
      }`,
    () =>
      Effect.gen(function* () {
        const { path: point } = yield* tmpfs("96m")
        const dataDir = join(point, "data")
        const first = yield* Effect.promise(() => PGlite.create({ dataDir }))
        const reopened: Array<PGlite> = []
        yield* Effect.addFinalizer(() =>
          Effect.promise(() => Promise.all(reopened.map((db) => db.close())).then(() => undefined))
        )
        const executor = yield* makePgliteExecutor(first, {
          reopenIntervalMs: 0,
          reopen: async () => {
            const db = await PGlite.create({ dataDir })
            reopened.push(db)
            return db
          }
        })
        yield* executor.query("CREATE TABLE kept (id integer PRIMARY KEY)")
        yield* executor.query("INSERT INTO kept VALUES (1)")
        // Full, but for a little: the next WAL segment (a new 16 MiB file) cannot be made.
        const filler = join(point, "filler")
        fillFileSystem(filler, 256 * 1024)
        yield* executor.query("SELECT pg_switch_wal()")

        const crash = yield* Effect.flip(executor.query("INSERT INTO kept VALUES (2)"))
        expect(crash).toMatchObject({ _tag: "Unavailable", reason: "store_full" })
        expect(crash.cause).toMatchObject({ severity: "PANIC", code: "53100" })
        expect(first.closed).toBe(true)

        rmSync(filler)
        expect(yield* executor.query("SELECT id FROM kept ORDER BY id")).toEqual([{ id: 1 }])
        yield* executor.query("INSERT INTO kept VALUES (3)")
        expect(yield* executor.query("SELECT id FROM kept ORDER BY id")).toEqual([{ id: 1 }, { id: 3 }])
        expect(reopened).toHaveLength(1)
      }).pipe(Effect.scoped),
    120_000
  )
})
