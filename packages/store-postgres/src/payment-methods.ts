import { Effect, Schema } from "effect"
import {
  type DomainEvent,
  notBefore,
  NotFound,
  type PaymentMethod,
  PaymentMethodId,
  PaymentMethods,
  PreconditionFailed,
  type Unavailable,
  UserId
} from "@accord/domain"
import { eventCtes } from "./events.js"
import { queryRows, type SqlClient, type SqlExecutor } from "./sql-executor.js"
import type { Turns } from "./turns.js"

const COLUMNS = "id, user_id, is_default, created_at, updated_at"

const PaymentMethodRow = Schema.Struct({
  id: Schema.toType(PaymentMethodId),
  user_id: Schema.toType(UserId),
  is_default: Schema.Boolean,
  created_at: Schema.Date,
  updated_at: Schema.Date
})
const paymentMethodRows = queryRows(PaymentMethodRow)

const toPaymentMethod = (row: typeof PaymentMethodRow.Type): PaymentMethod => ({
  id: row.id,
  userId: row.user_id,
  isDefault: row.is_default,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const notFound = new NotFound({ resource: "payment_method" })

/**
 * Serialises every change to one user's defaults, across connections and processes, for the rest of the
 * transaction. An advisory lock rather than row locks: it also covers a method being inserted concurrently (seed),
 * which no existing row lock would. `accord_set_default_payment_method` (migration 2) takes the same key.
 */
export const lockUserDefaults = (tx: SqlClient, userId: UserId) =>
  tx.query("SELECT pg_advisory_xact_lock(hashtext('accord.payment_methods'), hashtext($1))", [userId])

/** The CTEs and parameters after `$5` of the move, and the method as the move will write it. */
const moveOf = (
  target: PaymentMethod,
  previous: PaymentMethod | undefined,
  now: Date,
  events: (previous: PaymentMethod | undefined, chosen: PaymentMethod) => ReadonlyArray<DomainEvent>
) => {
  // The events of the move as it will be written: the function sets `updated_at` as set-default does.
  const chosen: PaymentMethod = { ...target, isDefault: true, updatedAt: notBefore(now, target.updatedAt) }
  return eventCtes(events(previous, chosen), 6, "moved")
}

/**
 * Judges set-default on the user's methods as `client` reads them, and moves the default only if nothing changed since
 * that read (`accord_move_default_payment_method_if`, migration 5), writing the change's events (docs/api.md,
 * "Events") as CTEs of the same statement, so with it or not at all: the method written, the target when it already
 * was the default (nothing recorded), or undefined when something changed between the read and the move.
 */
const judgeAndMove = (
  client: SqlClient,
  userId: UserId,
  id: PaymentMethodId,
  now: Date,
  events: (previous: PaymentMethod | undefined, chosen: PaymentMethod) => ReadonlyArray<DomainEvent>,
  precondition: ((current: PaymentMethod) => boolean) | undefined
): Effect.Effect<PaymentMethod | undefined, NotFound | PreconditionFailed | Unavailable> =>
  Effect.flatMap(
    paymentMethodRows(client, `SELECT ${COLUMNS} FROM payment_methods WHERE user_id = $1`, [userId]),
    (rows): Effect.Effect<PaymentMethod | undefined, NotFound | PreconditionFailed | Unavailable> => {
      const methods = rows.map(toPaymentMethod)
      const target = methods.find((method) => method.id === id)
      if (target === undefined) return Effect.fail(notFound)
      if (precondition !== undefined && !precondition(target)) return Effect.fail(new PreconditionFailed())
      if (target.isDefault) return Effect.succeed(target)
      const previous = methods.find((method) => method.isDefault)
      const recorded = moveOf(target, previous, now, events)
      return Effect.map(
        paymentMethodRows(
          client,
          `WITH moved AS (
             SELECT ${COLUMNS} FROM accord_move_default_payment_method_if($1, $2, $3::timestamptz, $4::timestamptz, $5)
           )${recorded.ctes.map((cte) => `, ${cte}`).join("")}
           SELECT ${COLUMNS} FROM moved`,
          [userId, id, now, target.updatedAt, previous?.id ?? null, ...recorded.params]
        ),
        ([moved]) => (moved === undefined ? undefined : toPaymentMethod(moved))
      )
    }
  )

/**
 * setDefault in the user's turn (`Turns`: one call per user at a time in this process) as a compare-and-set, in two
 * round trips and no transaction held across them. When another process moved something between the read and the
 * move, it is made again in a transaction holding the user's lock (`lockUserDefaults`), where nothing can come between:
 * at most seven round trips whatever the contention (docs/operations.md, "Writes under contention").
 */
const setDefault = (
  sql: SqlExecutor,
  turns: Turns,
  userId: UserId,
  id: PaymentMethodId,
  now: Date,
  events: (previous: PaymentMethod | undefined, chosen: PaymentMethod) => ReadonlyArray<DomainEvent>,
  precondition: ((current: PaymentMethod) => boolean) | undefined
): Effect.Effect<PaymentMethod, NotFound | PreconditionFailed | Unavailable> =>
  turns.run(`payment_methods/${userId}`, () =>
    Effect.flatMap(judgeAndMove(sql, userId, id, now, events, precondition), (moved) =>
      moved !== undefined
        ? Effect.succeed(moved)
        : sql.transaction((tx) =>
            lockUserDefaults(tx, userId).pipe(
              Effect.andThen(judgeAndMove(tx, userId, id, now, events, precondition)),
              Effect.flatMap((locked) =>
                locked === undefined
                  ? Effect.die(new Error("payment_methods: the default moved under the user's lock"))
                  : Effect.succeed(locked)
              )
            )
          )
    )
  )

export const makePaymentMethods = (sql: SqlExecutor, turns: Turns) =>
  PaymentMethods.of({
    listByUser: (userId) =>
      Effect.map(
        paymentMethodRows(sql, `SELECT ${COLUMNS} FROM payment_methods WHERE user_id = $1 ORDER BY id`, [userId]),
        (rows) => rows.map(toPaymentMethod)
      ),
    setDefault: (userId, id, now, events, precondition) => setDefault(sql, turns, userId, id, now, events, precondition)
  })
