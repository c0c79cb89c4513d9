import { Effect, Schema } from "effect"
import { NotFound, PaymentMethodId, PaymentMethods, UserId, type PaymentMethod } from "@accord/core"
import { queryRows, type SqlClient, type SqlExecutor } from "./sql-executor.js"

const COLUMNS = "id, user_id, is_default, created_at, updated_at"

const PaymentMethodRow = Schema.Struct({
  id: Schema.typeSchema(PaymentMethodId),
  user_id: Schema.typeSchema(UserId),
  is_default: Schema.Boolean,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
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
 * which no existing row lock would.
 */
export const lockUserDefaults = (tx: SqlClient, userId: UserId) =>
  tx.query("SELECT pg_advisory_xact_lock(hashtext('accord.payment_methods'), hashtext($1))", [userId])

const setDefaultIn = (tx: SqlClient, userId: UserId, id: PaymentMethodId, now: Date) =>
  Effect.gen(function* () {
    yield* lockUserDefaults(tx, userId)
    const [target] = yield* paymentMethodRows(tx, `SELECT ${COLUMNS} FROM payment_methods WHERE id = $1 AND user_id = $2`, [
      id,
      userId
    ])
    if (target === undefined) return yield* Effect.fail(notFound)
    if (target.is_default) return toPaymentMethod(target)
    // Unset first: at no point of the statement sequence does the partial unique index see two defaults.
    yield* tx.query(
      "UPDATE payment_methods SET is_default = false, updated_at = $2::timestamptz WHERE user_id = $1 AND is_default",
      [userId, now]
    )
    const [chosen] = yield* paymentMethodRows(
      tx,
      `UPDATE payment_methods SET is_default = true, updated_at = $2::timestamptz WHERE id = $1 RETURNING ${COLUMNS}`,
      [id, now]
    )
    return chosen === undefined ? yield* Effect.dieMessage(`payment method ${id} vanished while locked`) : toPaymentMethod(chosen)
  })

export const makePaymentMethods = (sql: SqlExecutor) =>
  PaymentMethods.of({
    listByUser: (userId) =>
      Effect.map(
        paymentMethodRows(sql, `SELECT ${COLUMNS} FROM payment_methods WHERE user_id = $1 ORDER BY id`, [userId]),
        (rows) => rows.map(toPaymentMethod)
      ),
    setDefault: (userId, id, now) => sql.transaction((tx) => setDefaultIn(tx, userId, id, now))
  })
