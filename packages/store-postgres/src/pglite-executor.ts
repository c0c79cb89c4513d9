import { Effect, Exit, Semaphore } from "effect"
import type { PGlite } from "@electric-sql/pglite"
import type { SqlClient, SqlExecutor } from "./sql-executor.js"

/**
 * A SqlExecutor over one in-process PGlite database. PGlite has a single connection, so a transaction must own it
 * from BEGIN to COMMIT: every statement, in a transaction or not, takes the one permit. There is no network, so
 * no error here is Unavailable: every error is a defect.
 */
export const makePgliteExecutor = (db: PGlite): Effect.Effect<SqlExecutor> =>
  Effect.map(Semaphore.make(1), (connection) => {
    const run = (text: string, params: ReadonlyArray<unknown> = []): Effect.Effect<ReadonlyArray<unknown>> =>
      Effect.map(
        Effect.promise(() => db.query(text, [...params])),
        (result) => result.rows
      )
    const raw: SqlClient = { query: run }
    const exclusive = connection.withPermits(1)
    return {
      query: (text, params) => exclusive(raw.query(text, params)),
      transaction: (body) =>
        exclusive(
          Effect.acquireUseRelease(
            raw.query("BEGIN"),
            () => Effect.tap(body(raw), raw.query("COMMIT")),
            (_, exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.asVoid(run("ROLLBACK")))
          )
        )
    }
  })
