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
 * setDefault as a compare-and-set, in two round trips and no transaction held across them: the user's methods as they
 * are, the precondition (an HTTP If-Match) judged on the target, then one statement that moves the default only if
 * nothing changed since the read (`accord_move_default_payment_method_if`, migration 5) and writes the change's events
 * (docs/api.md, "Events") as CTEs of the same statement, so with it or not at all. When something changed, the methods
 * are read and judged again: of concurrent calls judging one version, one writes.
 */
const setDefault = (
  sql: SqlClient,
  userId: UserId,
  id: PaymentMethodId,
  now: Date,
  events: (previous: PaymentMethod | undefined, chosen: PaymentMethod) => ReadonlyArray<DomainEvent>,
  precondition: ((current: PaymentMethod) => boolean) | undefined
): Effect.Effect<PaymentMethod, NotFound | PreconditionFailed | Unavailable> =>
  Effect.flatMap(
    paymentMethodRows(sql, `SELECT ${COLUMNS} FROM payment_methods WHERE user_id = $1`, [userId]),
    (rows) => {
      const methods = rows.map(toPaymentMethod)
      const target = methods.find((method) => method.id === id)
      if (target === undefined) return Effect.fail(notFound)
      if (precondition !== undefined && !precondition(target)) return Effect.fail(new PreconditionFailed())
      // Already the default: set-default returns it unchanged, and records nothing.
      if (target.isDefault) return Effect.succeed(target)
      const previous = methods.find((method) => method.isDefault)
      // The events of the move as it will be written: the function sets `updated_at` as set-default does.
      const chosen: PaymentMethod = { ...target, isDefault: true, updatedAt: notBefore(now, target.updatedAt) }
      const recorded = eventCtes(events(previous, chosen), 6, "moved")
      return Effect.flatMap(
        paymentMethodRows(
          sql,
          `WITH moved AS (
             SELECT ${COLUMNS} FROM accord_move_default_payment_method_if($1, $2, $3::timestamptz, $4::timestamptz, $5)
           )${recorded.ctes.map((cte) => `, ${cte}`).join("")}
           SELECT ${COLUMNS} FROM moved`,
          [userId, id, now, target.updatedAt, previous?.id ?? null, ...recorded.params]
        ),
        ([moved]) =>
          moved === undefined
            ? setDefault(sql, userId, id, now, events, precondition)
            : Effect.succeed(toPaymentMethod(moved))
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
    setDefault: (userId, id, now, events, precondition) => setDefault(sql, userId, id, now, events, precondition)
  })
