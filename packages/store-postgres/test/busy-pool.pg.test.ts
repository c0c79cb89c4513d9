import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Latch } from "effect"
import { makePgPool, makePoolExecutor, type PgPoolStats } from "@accord/store-postgres"
import { databaseUrl, skipReason } from "./postgres-helpers.js"

const url = databaseUrl ?? ""

/** A one-connection pool whose connection is held by a transaction until `release` is opened. */
const heldPool = (connectionTimeoutMs?: number, observePool?: (pool: PgPoolStats) => void) =>
  Effect.gen(function* () {
    const executor = makePoolExecutor(
      yield* makePgPool({
        connectionString: url,
        poolSize: 1,
        ...(connectionTimeoutMs !== undefined && { connectionTimeoutMs }),
        ...(observePool !== undefined && { observePool })
      })
    )
    const release = yield* Latch.make(false)
    let holderDone = false
    const holder = yield* Effect.forkChild(
      executor
        .transaction((tx) => Effect.andThen(tx.query("SELECT 1"), release.await))
        .pipe(Effect.ensuring(Effect.sync(() => (holderDone = true))))
    )
    // Let the holder check out the only connection before anyone else asks for it.
    yield* Effect.sleep("200 millis")
    return { executor, release, holder, holderDone: () => holderDone }
  })

describe.skipIf(databaseUrl === undefined)(
  databaseUrl === undefined ? `busy pool (skipped: ${skipReason})` : "busy pool",
  () => {
    it.live("a request for a busy pool waits for a free connection instead of failing", () =>
      Effect.gen(function* () {
        const { executor, release, holder, holderDone } = yield* heldPool()
        const waiting = yield* Effect.forkChild(
          Effect.map(executor.query("SELECT 2 AS two"), (rows) => ({ rows, afterHolder: holderDone() }))
        )
        yield* Effect.sleep("300 millis")
        yield* release.open
        yield* Fiber.join(holder)
        expect(yield* Fiber.join(waiting)).toEqual({ rows: [{ two: 2 }], afterHolder: true })
      }).pipe(Effect.scoped)
    )

    it.live("past connectionTimeoutMs the waiting request is Unavailable(store_unreachable)", () =>
      Effect.gen(function* () {
        const { executor, release, holder } = yield* heldPool(300)
        const error = yield* Effect.flip(executor.query("SELECT 1"))
        expect(error).toMatchObject({ _tag: "Unavailable", reason: "store_unreachable", retryAfterSeconds: 1 })
        yield* release.open
        yield* Fiber.join(holder)
        expect(yield* executor.query("SELECT 3 AS three")).toEqual([{ three: 3 }])
      }).pipe(Effect.scoped)
    )

    it.live("observePool: a live view of the connections open, idle and waited for, for a host's metrics", () =>
      Effect.gen(function* () {
        let stats: PgPoolStats | undefined
        const { executor, release, holder } = yield* heldPool(undefined, (view) => (stats = view))
        if (stats === undefined) throw new Error("observePool was not called as the pool was made")
        const view = stats
        const snapshot = () => ({ total: view.total, idle: view.idle, waiting: view.waiting, max: view.max })
        expect(snapshot()).toEqual({ total: 1, idle: 0, waiting: 0, max: 1 })
        const waiting = yield* Effect.forkChild(executor.query("SELECT 1"))
        yield* Effect.sleep("100 millis")
        expect(snapshot()).toEqual({ total: 1, idle: 0, waiting: 1, max: 1 })
        yield* release.open
        yield* Fiber.join(holder)
        yield* Fiber.join(waiting)
        expect(snapshot()).toEqual({ total: 1, idle: 1, waiting: 0, max: 1 })
      }).pipe(Effect.scoped)
    )
  }
)
