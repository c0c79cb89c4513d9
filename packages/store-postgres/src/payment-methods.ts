import { Effect, Schema } from "effect"
import {
  NotFound,
  type PaymentMethod,
  PaymentMethodId,
  PaymentMethods,
  PreconditionFailed,
  type Unavailable,
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
 * default inside the statement's own transaction, and the lock is never held while a reply crosses the network. An
 * outbox row (the events issue) joins it in the same statement, so in the same transaction:
 * `WITH chosen AS (SELECT * FROM accord_set_default_payment_method(...)), event AS (INSERT INTO outbox ... SELECT ...
 * FROM chosen) SELECT ... FROM chosen`; to write one only for a real change, the function would also return whether it
 * moved the default (a later migration).
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
 * setDefault with a precondition (an HTTP If-Match), as a compare-and-set in two round trips and no transaction held
 * across them: the method as it is, the precondition judged on it, then `accord_set_default_payment_method_if`
 * (migration 4), which sets the default only if the method is still that version, under the user's lock. When it is
 * not (another write came between), the method is read and judged again: of concurrent calls judging one version,
 * one writes.
 */
const setDefaultIf = (
  sql: SqlClient,
  userId: UserId,
  id: PaymentMethodId,
  now: Date,
  precondition: (current: PaymentMethod) => boolean
): Effect.Effect<PaymentMethod, NotFound | PreconditionFailed | Unavailable> =>
  Effect.flatMap(
    paymentMethodRows(sql, `SELECT ${COLUMNS} FROM payment_methods WHERE id = $1 AND user_id = $2`, [id, userId]),
    ([row]) => {
      if (row === undefined) return Effect.fail(notFound)
      const current = toPaymentMethod(row)
      if (!precondition(current)) return Effect.fail(new PreconditionFailed())
      // Already the default: set-default would return it unchanged.
      if (current.isDefault) return Effect.succeed(current)
      return Effect.flatMap(
        paymentMethodRows(
          sql,
          `SELECT ${COLUMNS} FROM accord_set_default_payment_method_if($1, $2, $3::timestamptz, $4, $5::timestamptz)`,
          [userId, id, now, row.is_default, row.updated_at]
        ),
        ([chosen]) =>
          chosen === undefined
            ? setDefaultIf(sql, userId, id, now, precondition)
            : Effect.succeed(toPaymentMethod(chosen))
      )
    }
  )

export const makePaymentMethods = (sql: SqlExecutor) =>
  PaymentMethods.of({
    listByUser: (userId) =>
      Effect.map(
        paymentMethodRows(sql, `SELECT ${COLUMNS} FROM payment_methods WHERE user_id = $1 ORDER BY id`, [userId]),
        (rows) => rows.map(toPaymentMethod)
      ),
    // Events: phase B of issue 31 (the outbox table, written in this transaction); until then none is recorded here.
    setDefault: (userId, id, now, _events, precondition) =>
      precondition === undefined ? setDefault(sql, userId, id, now) : setDefaultIf(sql, userId, id, now, precondition)
  })
