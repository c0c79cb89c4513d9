import { Effect, Exit } from "effect"
import type pg from "pg"
import type { Unavailable } from "@accord/core"
import { fromDriverError } from "./connection-errors.js"
import type { SqlClient, SqlExecutor } from "./sql-executor.js"

/** A client checked out of the pool for one transaction, and whether its connection broke meanwhile. */
interface Checkout {
  readonly client: pg.PoolClient
  readonly onError: (error: Error) => void
  broken: boolean
}

const run = (
  target: pg.Pool | pg.PoolClient,
  text: string,
  params: ReadonlyArray<unknown>
): Effect.Effect<ReadonlyArray<unknown>, Unavailable> =>
  Effect.tryPromise({ try: () => target.query(text, [...params]), catch: (error) => error }).pipe(
    Effect.map((result) => result.rows),
    Effect.catch(fromDriverError)
  )

const checkOut = (pool: pg.Pool): Effect.Effect<Checkout, Unavailable> =>
  Effect.tryPromise({ try: () => pool.connect(), catch: (error) => error }).pipe(
    Effect.catch(fromDriverError),
    Effect.map((client) => {
      const checkout: Checkout = {
        client,
        // A checked-out client has no pool listener: without ours, a connection lost between two statements would
        // be an unhandled 'error' event and crash the process.
        onError: () => {
          checkout.broken = true
        },
        broken: false
      }
      client.on("error", checkout.onError)
      return checkout
    })
  )

/** Gives the client back; a broken one is destroyed (`release(true)`) so the pool opens a fresh connection later. */
const giveBack = (checkout: Checkout): void => {
  checkout.client.removeListener("error", checkout.onError)
  checkout.client.release(checkout.broken)
}

const rollBack = (checkout: Checkout): Effect.Effect<void> =>
  checkout.broken
    ? Effect.void
    : Effect.tryPromise(() => checkout.client.query("ROLLBACK")).pipe(
        Effect.catch(() =>
          Effect.sync(() => {
            checkout.broken = true
          })
        ),
        Effect.asVoid
      )

/**
 * A SqlExecutor over a node-postgres pool. Single statements use `pool.query` (the pool releases, and on error
 * destroys, the client itself); transactions check a client out, and give it back destroyed when its connection
 * failed, so the pool heals by itself once the database is back.
 */
export const makePoolExecutor = (pool: pg.Pool): SqlExecutor => ({
  query: (text, params = []) => run(pool, text, params),
  transaction: (body) =>
    Effect.acquireUseRelease(
      checkOut(pool),
      (checkout) => {
        const tx: SqlClient = {
          // Every typed failure of `run` is a lost connection: that client must not go back to the pool.
          query: (text, params = []) =>
            Effect.tapError(run(checkout.client, text, params), () =>
              Effect.sync(() => {
                checkout.broken = true
              })
            )
        }
        return tx.query("BEGIN").pipe(Effect.andThen(body(tx)), Effect.tap(tx.query("COMMIT")))
      },
      (checkout, exit) =>
        Effect.andThen(
          Exit.isSuccess(exit) ? Effect.void : rollBack(checkout),
          Effect.sync(() => giveBack(checkout))
        )
    )
})
