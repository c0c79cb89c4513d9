import { PGlite } from "@electric-sql/pglite"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, type Context, type Scope } from "effect"
import { EventStore, PreferencesStore, type StoreServices, TimezoneOffset, UserId } from "@accord/domain"
import { makePgliteExecutor, oneCallQueries, SqlStoreLive, type SqlStoreOptions } from "@accord/store-postgres"
import { randomBytes } from "node:crypto"
import { adminQuery, databaseUrl, skipReason, storeInFreshSchema } from "./postgres-helpers.js"

// Issue 38: the SQL store reads every stored event back with the domain's Schema of its type (DOMAIN_EVENTS; the
// store contract round-trips each type on every store), and a row no Schema reads (a type a newer version wrote,
// values its type refuses) is reported by id and left out: it never breaks a listing of the others, nor the relay's
// claim.

const hex = () => randomBytes(6).toString("hex")

/** A change of the user's preferences at second `second`: one event of theirs. */
const change = (userId: UserId, timezone: number, second: number) =>
  Effect.flatMap(PreferencesStore, (store) =>
    store.update(userId, {
      set: { timezone: TimezoneOffset.make(timezone) },
      at: new Date(Date.UTC(2030, 0, 1, 0, 0, second))
    })
  )

/** Rows no Schema of this version reads, by what is wrong with them. */
const UNREADABLE = {
  "a type this version does not know": (userId: string) => ({ type: "preferences.renamed", userId }),
  "values its type's Schema refuses": (userId: string) => ({
    type: "preferences.updated",
    userId,
    changes: { timezone: { old: "0", new: 60 } }
  })
} as const

/** A store, SQL on its database with its tables' names under `tables` (a schema's prefix), and what it reported. */
interface Opened {
  readonly context: Context.Context<StoreServices>
  readonly sql: (text: string, params: ReadonlyArray<unknown>) => Promise<unknown>
  readonly tables: string
}

/** Inserts a stored event as the user's next one (their subject's next sequence number). */
const insertRow = ({ sql, tables }: Opened, userId: string, event: unknown): Promise<unknown> =>
  sql(
    `WITH next AS (UPDATE ${tables}event_subjects SET last_sequence = last_sequence + 1 WHERE subject = $1
       RETURNING last_sequence)
     INSERT INTO ${tables}events (id, subject, sequence, owner, event, at)
     SELECT $2::uuid, $1, last_sequence, $3, $4::jsonb, now() FROM next`,
    [`users/${userId}`, `019a4f6e-3c2b-7d40-9a1e-${hex()}`, userId, JSON.stringify(event)]
  )

const checks = (open: (options: SqlStoreOptions) => Effect.Effect<Opened, unknown, Scope.Scope>) =>
  it.effect.each(Object.entries(UNREADABLE))("a row with %s is reported and skipped; the others list", ([, row]) =>
    Effect.scoped(
      Effect.gen(function* () {
        const reported: Array<readonly [string, string]> = []
        const opened = yield* open({ onUnreadableEvent: (id, why) => reported.push([id, why]) })
        const userId = UserId.make(`u_${hex()}`)
        yield* Effect.provide(Effect.all([change(userId, 15, 1), change(userId, 30, 2)]), opened.context)
        yield* Effect.promise(() => insertRow(opened, userId, row(userId)))
        yield* Effect.provide(Effect.all([change(userId, 45, 3), change(userId, 60, 4)]), opened.context)
        const store = yield* Effect.provide(EventStore, opened.context)
        const mine = yield* store.listByOwner(userId, undefined, 10)
        expect(mine.map((recorded) => recorded.sequence)).toStrictEqual([1, 2, 4, 5])
        expect(reported.length).toBe(1)
        const [id = "", why = ""] = reported[0] ?? []
        // Reported by its id and why; nothing of its values.
        expect(id).toMatch(/^019a4f6e-3c2b-7d40-9a1e-/)
        expect(why).not.toContain(userId)
        // The feed's cursor still works past it, the list of all events leaves it out, and so does the relay's claim.
        const afterSecond = yield* store.listByOwner(userId, mine[1]?.id, 10)
        expect(afterSecond.map((recorded) => recorded.sequence)).toStrictEqual([4, 5])
        // A full page stays full: it reads on past the row it leaves out (the feed's has_more holds).
        const page = yield* store.listByOwner(userId, mine[0]?.id, 2)
        expect(page.map((recorded) => recorded.sequence)).toStrictEqual([2, 4])
        const all = yield* store.list(undefined, 10_000)
        const position = all.findIndex((recorded) => recorded.id === mine[1]?.id)
        const listed = yield* store.list(all[position - 1]?.id, 2)
        expect(listed.map((recorded) => recorded.id)).toStrictEqual([mine[1]?.id, mine[2]?.id])
        expect(all.some((recorded) => recorded.id === id)).toBe(false)
        yield* store.dispatch(["unreadable-test"], 10_000)
        const claimed = yield* store.claimDue(
          "unreadable-test",
          new Date(Date.now() + 60_000),
          new Date(Date.now() + 120_000),
          10_000
        )
        expect(claimed.some(({ recorded }) => recorded.id === id)).toBe(false)
        expect(claimed.filter(({ recorded }) => recorded.subject === `users/${userId}`).length).toBe(4)
      })
    )
  )

describe("stored events no Schema reads, on PGlite", () => {
  checks((options) =>
    Effect.gen(function* () {
      const db = yield* Effect.acquireRelease(
        Effect.promise(() => PGlite.create()),
        (open) => Effect.promise(() => open.close())
      )
      const context = yield* Layer.build(
        SqlStoreLive(yield* makePgliteExecutor(oneCallQueries(db)), undefined, options)
      )
      return { context, sql: (text, params) => db.query(text, [...params]), tables: "" }
    })
  )
})

describe.skipIf(databaseUrl === undefined)(
  `stored events no Schema reads, on PostgreSQL${databaseUrl === undefined ? ` (skipped: ${skipReason})` : ""}`,
  () => {
    checks((options) =>
      Effect.gen(function* () {
        const url = databaseUrl ?? ""
        const { schema, layer } = storeInFreshSchema(url, options)
        const context = yield* Layer.build(layer)
        return { context, sql: (text, params) => adminQuery(url, text, params), tables: `"${schema}".` }
      })
    )
  }
)
