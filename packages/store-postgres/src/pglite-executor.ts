import { Effect, Exit, Semaphore } from "effect"
import type { Unavailable } from "@accord/domain"
import { fromDriverError, isStoreFull, storeFull, storeUnreachable } from "./connection-errors.js"
import type { SqlClient, SqlExecutor } from "./sql-executor.js"

/** What the executor asks of a PGlite database (`PGlite` itself; a test may pass a stand-in). */
export interface PgliteDatabase {
  readonly query: (text: string, params?: Array<unknown>) => Promise<{ readonly rows: ReadonlyArray<unknown> }>
  readonly close: () => Promise<void>
}

export interface PgliteExecutorOptions {
  /**
   * Undefined while the database's file system has room for a statement, else why not: the statement is then not
   * given to PGlite, and fails Unavailable(store_full). On a full disk PostgreSQL PANICs when its WAL cannot grow, and
   * PGlite, when that happens in a COMMIT, never returns: it spins in the process's one thread (measured).
   */
  readonly checkRoom?: () => Error | undefined
  /**
   * Opens the database again after it crashed, as PostgreSQL restarts after a PANIC (its crash recovery replays the
   * WAL: every committed transaction is kept). Tried by the next statement, at most once per `reopenIntervalMs`.
   * Absent (a database in memory, which a crash loses): every statement after a crash fails Unavailable.
   */
  readonly reopen?: () => Promise<PgliteDatabase>
  /** The least time between two attempts to reopen, default `REOPEN_INTERVAL_MS`. */
  readonly reopenIntervalMs?: number
  /**
   * Called with the error of every statement that failed because the database has no room left (a full disk:
   * SQLSTATE 53100, or `checkRoom`'s answer), which fails Unavailable(store_full): for the host's log.
   */
  readonly onStoreFull?: (cause: unknown) => void
}

/** The least time between two attempts to reopen a crashed database (each costs PGlite's start, about a second). */
export const REOPEN_INTERVAL_MS = 5000

/**
 * PostgreSQL ends its backend on PANIC (PGlite: when the WAL cannot grow on a full disk, outside a COMMIT) and FATAL.
 * PGlite's instance is dead then: the next statement it is given spins for ever in the one thread, and the whole
 * process with it (measured). It is closed (that works) and never given a statement again.
 */
const isCrash = (error: unknown): boolean =>
  typeof error === "object" &&
  error !== null &&
  "severity" in error &&
  (error.severity === "PANIC" || error.severity === "FATAL")

/**
 * A SqlExecutor over one in-process PGlite database. PGlite has a single connection, so a transaction must own it
 * from BEGIN to COMMIT: every statement, in a transaction or not, takes the one permit. There is no network: a full
 * disk (or memory) is Unavailable(store_full), a crashed database Unavailable until it is reopened, any other error a
 * defect (docs/operations.md, "The PGlite store").
 */
export const makePgliteExecutor = (
  db: PgliteDatabase,
  options: PgliteExecutorOptions = {}
): Effect.Effect<SqlExecutor> =>
  Effect.map(Semaphore.make(1), (connection) => {
    const { checkRoom, reopen, onStoreFull, reopenIntervalMs = REOPEN_INTERVAL_MS } = options
    /** The database statements go to; undefined once it crashed, until it is reopened. */
    let current: PgliteDatabase | undefined = db
    /** What every statement fails with while there is no database: the crash's, then the last reopen's failure. */
    let down: Unavailable | undefined
    let reopenAfter = 0
    const downNow = (): Unavailable => down ?? storeUnreachable(new Error("the PGlite database crashed"))

    /** Fails with `unavailable`, told to `onStoreFull` when the store is full. */
    const failWith = (unavailable: Unavailable): Effect.Effect<never, Unavailable> =>
      unavailable.reason === "store_full"
        ? Effect.andThen(
            Effect.sync(() => onStoreFull?.(unavailable.cause)),
            Effect.fail(unavailable)
          )
        : Effect.fail(unavailable)

    /** Gives up a database that crashed: closed, and never given a statement again. */
    const crashed = (crashedDb: PgliteDatabase, error: unknown): Effect.Effect<never, Unavailable> =>
      Effect.gen(function* () {
        if (current === crashedDb) current = undefined
        down = isStoreFull(error) ? storeFull(error) : storeUnreachable(error)
        reopenAfter = 0
        yield* Effect.promise(() => crashedDb.close().catch(() => {}))
        return yield* failWith(down)
      })

    /** A statement on `on`: not given to it when the file system has no room (a ROLLBACK always is: it frees). */
    const run = (on: PgliteDatabase, text: string, params: ReadonlyArray<unknown>, needsRoom = true) =>
      Effect.suspend(() => {
        const noRoom = needsRoom ? checkRoom?.() : undefined
        if (noRoom !== undefined) return failWith(storeFull(noRoom))
        return Effect.tryPromise({ try: () => on.query(text, [...params]), catch: (error) => error }).pipe(
          Effect.map((result) => result.rows),
          Effect.catch((error) => (isCrash(error) ? crashed(on, error) : fromDriverError(error, onStoreFull)))
        )
      })

    /**
     * The live database; after a crash, reopened when the interval since the last attempt has passed (outside a
     * transaction only: its statements must all go to the database that began it).
     */
    const live: Effect.Effect<PgliteDatabase, Unavailable> = Effect.suspend(() => {
      if (current !== undefined) return Effect.succeed(current)
      const unavailable = downNow()
      if (reopen === undefined || performance.now() < reopenAfter) return failWith(unavailable)
      reopenAfter = performance.now() + reopenIntervalMs
      return Effect.tryPromise({ try: reopen, catch: (error) => error }).pipe(
        Effect.map((reopened) => {
          current = reopened
          down = undefined
          return reopened
        }),
        Effect.catch((error) => {
          // Still out of room, or still unusable: the crash's reason stays, with this failure as its cause.
          down = unavailable.reason === "store_full" ? storeFull(error) : storeUnreachable(error)
          return failWith(down)
        })
      )
    })

    const exclusive = connection.withPermits(1)
    return {
      query: (text, params = []) => exclusive(Effect.flatMap(live, (on) => run(on, text, params))),
      transaction: (body) =>
        exclusive(
          Effect.flatMap(live, (on) => {
            const tx: SqlClient = {
              // The database that began the transaction, or none: a crash ends the transaction with it.
              query: (text, params = []) =>
                current === on ? run(on, text, params) : Effect.suspend(() => failWith(downNow()))
            }
            return Effect.acquireUseRelease(
              tx.query("BEGIN"),
              () => Effect.tap(body(tx), tx.query("COMMIT")),
              (_, exit) =>
                Exit.isSuccess(exit) || current !== on ? Effect.void : Effect.ignore(run(on, "ROLLBACK", [], false))
            )
          })
        )
    }
  })
