import { randomBytes } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber, Latch, Layer } from "effect"
import { TestClock } from "effect/testing"
import pg from "pg"
import { PreferencesStore, preferencesMerge, TimezoneOffset, Unavailable, UserId } from "@accord/domain"
import { PostgresStoreLive } from "@accord/store-postgres"
import { makeTurns } from "../src/turns.js"
import { databaseUrl, dropSchemaOnClose, freshSchema, skipReason } from "./postgres-helpers.js"

// docs/operations.md, "Writes under contention": the writers of one record take turns in the process, each waiting at
// most the turn's bound, then Unavailable(store_busy) (a 503 with Retry-After).

describe("turns (issue 36)", () => {
  it.effect("a writer whose turn does not come within the wait fails store_busy; other records do not wait", () =>
    Effect.gen(function* () {
      const turns = makeTurns(1000)
      const held = yield* Latch.make(false)
      const release = yield* Latch.make(false)
      const holder = yield* Effect.forkChild(turns.run("a", () => Effect.andThen(held.open, release.await)))
      yield* held.await
      const waiting = yield* Effect.forkChild(Effect.exit(turns.run("a", () => Effect.succeed("late"))))
      // Another record's writer is served while "a" is held.
      expect(yield* turns.run("b", () => Effect.succeed("other"))).toBe("other")
      yield* TestClock.adjust(999)
      expect(waiting.pollUnsafe()).toBeUndefined()
      yield* TestClock.adjust(1)
      const exit = yield* Fiber.join(waiting)
      expect(Exit.isFailure(exit) && Exit.findErrorOption(exit)).toMatchObject({
        _tag: "Some",
        value: { _tag: "Unavailable", reason: "store_busy", retryAfterSeconds: 1 }
      })
      yield* release.open
      yield* Fiber.join(holder)
      // Nothing is kept for a record nobody writes.
      expect(turns.size).toBe(0)
    })
  )

  it.effect("writers of one record run one at a time, in the order they came, each leaving the next its record", () =>
    Effect.gen(function* () {
      const turns = makeTurns(60_000)
      const order: Array<number> = []
      let inside = 0
      let most = 0
      const writer = (index: number) =>
        turns.run("a", (turn: { last: number | undefined }) =>
          Effect.gen(function* () {
            inside += 1
            most = Math.max(most, inside)
            order.push(turn.last ?? -1)
            yield* Effect.yieldNow
            turn.last = index
            inside -= 1
          })
        )
      yield* Effect.all(
        Array.from({ length: 20 }, (_, index) => writer(index)),
        { concurrency: "unbounded" }
      )
      expect(most).toBe(1)
      expect(order).toEqual([-1, ...Array.from({ length: 19 }, (_, index) => index)])
      expect(turns.size).toBe(0)
    })
  )

  it.effect("a failed writer leaves the turn to the next", () =>
    Effect.gen(function* () {
      const turns = makeTurns(60_000)
      const failed = yield* Effect.exit(turns.run("a", () => Effect.fail("boom")))
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* turns.run("a", () => Effect.succeed(1))).toBe(1)
    })
  )
})

const url = databaseUrl ?? ""

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `turns on PostgreSQL (skipped: ${skipReason})` : "turns on PostgreSQL",
  () => {
    it.live("with the row locked elsewhere, the writers queued past the query timeout fail store_busy", () =>
      Effect.gen(function* () {
        const schema = freshSchema()
        yield* dropSchemaOnClose(url, schema)
        const store = yield* Layer.build(PostgresStoreLive({ connectionString: url, schema, queryTimeoutMs: 300 }))
        const userId = UserId.make(`u_${randomBytes(6).toString("hex")}`)
        const now = new Date(Date.UTC(2030, 0, 1))
        const update = (offset: number) =>
          Effect.provide(
            Effect.flatMap(PreferencesStore, (preferences) =>
              preferences.update(userId, preferencesMerge({ timezone: TimezoneOffset.make(offset) }, now))
            ),
            store
          )
        yield* update(15)
        const holder = new pg.Client({ connectionString: url })
        yield* Effect.acquireRelease(
          Effect.promise(async () => {
            await holder.connect()
            await holder.query("BEGIN")
            await holder.query(`SELECT id FROM "${schema}".preferences WHERE user_id = $1 FOR UPDATE`, [userId])
          }),
          () => Effect.promise(() => holder.end())
        )
        // The first writer holds the turn at least until the server's statement_timeout (80% of the 300 ms) cancels its
        // write; the third and later wait for two such writers, past their 300 ms: store_busy, whatever the machine's
        // speed. No duration is judged.
        const exits = yield* Effect.all(
          Array.from({ length: 6 }, (_, index) => Effect.exit(update(30 + index * 15))),
          { concurrency: "unbounded" }
        )
        const reasons = exits.map((exit) => {
          const error = Exit.isFailure(exit) ? Exit.findErrorOption(exit) : undefined
          return error?._tag === "Some" && error.value instanceof Unavailable ? error.value.reason : "answered"
        })
        expect(reasons.filter((reason) => reason !== "store_unreachable" && reason !== "store_busy")).toEqual([])
        expect(reasons.filter((reason) => reason === "store_busy").length).toBeGreaterThanOrEqual(4)
        yield* Effect.promise(() => holder.query("ROLLBACK"))
        // The lock gone, the record's writers are served again.
        expect(yield* update(600)).toMatchObject({ timezone: 600 })
      }).pipe(Effect.scoped)
    )
  }
)
