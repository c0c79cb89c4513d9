import { Effect, Schema } from "effect"
import {
  NotFound,
  type PaymentMethod,
  PaymentMethodId,
  PaymentMethods,
  PreconditionFailed,
  UserId
} from "@accord/domain"
import { queryRows, type SqlClient, type SqlExecutor } from "./sql-executor.js"

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

/**
 * One statement, so one round trip: the function (migration 2) locks the user, checks ownership and moves the
 * default inside the statement's own transaction, and the lock is never held while a reply crosses the network.
 */
const setDefault = (sql: SqlClient, userId: UserId, id: PaymentMethodId, now: Date) =>
  Effect.flatMap(
    paymentMethodRows(sql, `SELECT ${COLUMNS} FROM accord_set_default_payment_method($1, $2, $3::timestamptz)`, [
      userId,
      id,
      now
    ]),
    ([chosen]) => (chosen === undefined ? Effect.fail(notFound) : Effect.succeed(toPaymentMethod(chosen)))
  )

/**
 * setDefault with a precondition (an HTTP If-Match): the user's lock, the method as it is, the check, then the same
 * function, all in one transaction, so no other change comes between the check and the write, from any process. The
 * function takes the lock again, which a transaction already holding it is granted at once.
 */
const setDefaultIf = (
  sql: SqlExecutor,
  userId: UserId,
  id: PaymentMethodId,
  now: Date,
  precondition: (current: PaymentMethod) => boolean
) =>
  sql.transaction((tx) =>
    Effect.gen(function* () {
      yield* lockUserDefaults(tx, userId)
      const [current] = yield* paymentMethodRows(
        tx,
        `SELECT ${COLUMNS} FROM payment_methods WHERE id = $1 AND user_id = $2`,
        [id, userId]
      )
      if (current === undefined) return yield* Effect.fail(notFound)
      if (!precondition(toPaymentMethod(current))) return yield* Effect.fail(new PreconditionFailed())
      return yield* setDefault(tx, userId, id, now)
    })
  )

export const makePaymentMethods = (sql: SqlExecutor) =>
  PaymentMethods.of({
    listByUser: (userId) =>
      Effect.map(
        paymentMethodRows(sql, `SELECT ${COLUMNS} FROM payment_methods WHERE user_id = $1 ORDER BY id`, [userId]),
        (rows) => rows.map(toPaymentMethod)
      ),
    setDefault: (userId, id, now, precondition) =>
      precondition === undefined ? setDefault(sql, userId, id, now) : setDefaultIf(sql, userId, id, now, precondition)
  })
