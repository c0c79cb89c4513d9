import { Effect, Exit } from "effect"
import type pg from "pg"
import type { Unavailable } from "@accord/domain"
import { DatabaseTimeout, fromDriverError, isConnectionError } from "./connection-errors.js"
import type { SqlClient, SqlExecutor } from "./sql-executor.js"

export interface PoolExecutorOptions {
  /**
   * The longest a statement may take, its wait for a connection included (in a transaction: the wait for its
   * connection, then each statement); past it the statement fails Unavailable and its connection is destroyed.
   * Absent or 0: no bound (what `migrate` uses: a migration, or its wait for another process's, may take long).
   */
  readonly queryTimeoutMs?: number
  /**
   * Called with the error of every statement that failed because the database has no room left (SQLSTATE 53100
   * disk_full, 53200 out_of_memory), which fails Unavailable(store_full): for the host's log.
   */
  readonly onStoreFull?: (cause: unknown) => void
}

/** The most statement texts given a name (`queryConfigOf`); the store has a few dozen, all constant. */
const MAX_NAMED_STATEMENTS = 500

/**
 * Names each parameterised statement text once per process, so that every connection parses and plans it once and
 * then only binds and executes it (node-postgres keeps a connection's named statements). Texts without parameters
 * (BEGIN, COMMIT, migrations) go as simple queries; past `MAX_NAMED_STATEMENTS` texts (a caller building texts
 * dynamically), unnamed. A connection pooler in transaction mode must support named statements (PgBouncer 1.21+ with
 * `max_prepared_statements`; docs/operations.md, "PostgreSQL").
 */
const statementNames = new Map<string, string>()
const queryConfigOf = (text: string, values: Array<unknown>): pg.QueryConfig<Array<unknown>> => {
  if (values.length === 0) return { text, values }
  let name = statementNames.get(text)
  if (name === undefined && statementNames.size < MAX_NAMED_STATEMENTS) {
    name = `accord_${statementNames.size + 1}`
    statementNames.set(text, name)
  }
  return name === undefined ? { text, values } : { name, text, values }
}

/** A client checked out of the pool, and whether its connection broke (or timed out) meanwhile. */
interface Checkout {
  readonly client: pg.PoolClient
  readonly onError: (error: Error) => void
  broken: boolean
}

/**
 * Gives a client up: out of the pool, and its socket destroyed at once. Ending it politely would wait for the
 * server's goodbye, which a stalled or vanished server never sends.
 */
const discard = (client: pg.PoolClient): void => {
  client.release(true)
  client.connection.stream.destroy()
}

/** Rejects with DatabaseTimeout after `ms` (0: never), calling `onTimeout` first. */
const deadline = (
  ms: number,
  onTimeout: () => void
): { readonly expired: Promise<never>; readonly clear: () => void } => {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_resolve, reject) => {
    if (ms > 0) {
      timer = setTimeout(() => {
        onTimeout()
        reject(new DatabaseTimeout(ms))
      }, ms)
    }
  })
  // Raced, never awaited alone: once the race is decided otherwise nobody listens (and it is cleared).
  expired.catch(() => {})
  return { expired, clear: () => clearTimeout(timer) }
}

/**
 * A SqlExecutor over a node-postgres pool. Every statement checks a client out and gives it back; a client whose
 * statement failed or timed out is destroyed rather than given back, so the pool heals by itself once the database
 * is back. With `queryTimeoutMs` nothing waits on the database longer than that (docs/operations.md, "Database
 * timeouts").
 *
 * After a failover the pool's idle connections are all dead, and each would cost a request the timeout. So when a
 * statement sent at time S gets no answer (or its connection breaks), every connection that has not answered
 * anything since S is suspect, and replaced at its next checkout: once one request has timed out, the others get
 * fresh connections. Those that answered after S are alive and kept.
 */
export const makePoolExecutor = (pool: pg.Pool, options: PoolExecutorOptions = {}): SqlExecutor => {
  const timeoutMs = options.queryTimeoutMs ?? 0
  const answeredAt = new WeakMap<pg.ClientBase, number>()
  let suspectBefore = Number.NEGATIVE_INFINITY
  pool.on("connect", (client) => void answeredAt.set(client, performance.now()))
  const suspect = (client: pg.ClientBase): boolean =>
    (answeredAt.get(client) ?? Number.NEGATIVE_INFINITY) < suspectBefore
  const lostSince = (sentAt: number): void => {
    suspectBefore = Math.max(suspectBefore, sentAt)
  }

  /**
   * A client within `ms` (0: no bound), listened to from the moment it is checked out: a checked-out client has no
   * pool listener, and a connection lost between two statements would otherwise be an unhandled 'error' event and
   * crash the process. A suspect one is destroyed and another taken; one that comes too late goes back unused.
   */
  const checkOutWithin = (ms: number): Promise<Checkout> => {
    let abandoned = false
    const limit = deadline(ms, () => {
      abandoned = true
    })
    const checkout = new Promise<Checkout>((resolve, reject) => {
      const attempt = (): void =>
        pool.connect((error, client, release: (destroy?: boolean) => void) => {
          if (abandoned) {
            if (client !== undefined) release()
          } else if (error !== undefined || client === undefined) {
            reject(error)
          } else if (suspect(client)) {
            discard(client)
            attempt()
          } else {
            const checkout: Checkout = {
              client,
              onError: () => {
                checkout.broken = true
              },
              broken: false
            }
            client.on("error", checkout.onError)
            resolve(checkout)
          }
        })
      attempt()
    })
    return Promise.race([checkout, limit.expired]).finally(limit.clear)
  }

  /** Gives the client back; a broken one is destroyed so the pool opens a fresh connection later. */
  const giveBack = (checkout: Checkout): void => {
    checkout.client.removeListener("error", checkout.onError)
    if (checkout.broken) discard(checkout.client)
    else checkout.client.release()
  }

  /**
   * The statement's rows within `ms` (0: no bound). A timeout or a lost connection marks the client broken (it is
   * destroyed as it goes back: the statement may still be waiting for an answer) and makes the others suspect.
   */
  const statementWithin = async (
    checkout: Checkout,
    text: string,
    params: ReadonlyArray<unknown>,
    ms: number
  ): Promise<ReadonlyArray<unknown>> => {
    const sentAt = performance.now()
    const limit = deadline(ms, () => {
      checkout.broken = true
      lostSince(sentAt)
    })
    try {
      const result = await Promise.race([checkout.client.query(queryConfigOf(text, [...params])), limit.expired])
      answeredAt.set(checkout.client, performance.now())
      return result.rows
    } catch (error) {
      if (isConnectionError(error)) {
        checkout.broken = true
        lostSince(sentAt)
      }
      throw error
    } finally {
      limit.clear()
    }
  }

  /** One statement, its checkout included, within the timeout; after any failure the client is destroyed. */
  const single = async (text: string, params: ReadonlyArray<unknown>): Promise<ReadonlyArray<unknown>> => {
    const started = performance.now()
    const checkout = await checkOutWithin(timeoutMs)
    const left = timeoutMs > 0 ? Math.max(1, timeoutMs - (performance.now() - started)) : 0
    try {
      return await statementWithin(checkout, text, params, left)
    } catch (error) {
      // As pool.query does: a client whose statement failed is not reused, whatever the failure.
      checkout.broken = true
      throw error
    } finally {
      giveBack(checkout)
    }
  }

  const attempt = <A>(promise: () => Promise<A>): Effect.Effect<A, Unavailable> =>
    Effect.tryPromise({ try: promise, catch: (error) => error }).pipe(
      Effect.catch((error) => fromDriverError(error, options.onStoreFull))
    )

  const rollBack = (checkout: Checkout): Effect.Effect<void> =>
    checkout.broken
      ? Effect.void
      : Effect.tryPromise(() => statementWithin(checkout, "ROLLBACK", [], timeoutMs)).pipe(
          Effect.catch(() =>
            Effect.sync(() => {
              checkout.broken = true
            })
          ),
          Effect.asVoid
        )

  return {
    query: (text, params = []) => attempt(() => single(text, params)),
    transaction: (body) =>
      Effect.acquireUseRelease(
        attempt(() => checkOutWithin(timeoutMs)),
        (checkout) => {
          const tx: SqlClient = {
            // A typed failure of a statement is a lost or timed out connection, or a full disk: as pool.query does,
            // that client does not go back.
            query: (text, params = []) =>
              Effect.tapError(
                attempt(() => statementWithin(checkout, text, params, timeoutMs)),
                () =>
                  Effect.sync(() => {
                    checkout.broken = true
                  })
              )
          }
          return tx.query("BEGIN").pipe(Effect.andThen(body(tx)), Effect.tap(tx.query("COMMIT")))
        },
        (checkout, exit) => {
          // Interrupted, a statement may still be running on it: destroyed, not rolled back behind that statement.
          if (Exit.hasInterrupts(exit)) checkout.broken = true
          return Effect.andThen(
            Exit.isSuccess(exit) ? Effect.void : rollBack(checkout),
            Effect.sync(() => giveBack(checkout))
          )
        }
      )
  }
}
