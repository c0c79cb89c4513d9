import { Effect, Schema } from "effect"
import {
  type DeliveryStatus,
  type DomainEvent,
  Email,
  EventStore,
  isIssuedEventId,
  LanguageTag,
  newEventId,
  ownerOf,
  PaymentMethodId,
  type RecordedEvent,
  subjectOf,
  TimezoneOffset,
  UnknownCursor,
  type Unavailable,
  UserId
} from "@accord/domain"
import { queryRows, type SqlExecutor } from "./sql-executor.js"

// docs/api.md, "Events": the SQL store's outbox (migration 5). A change's events are written by the change's own
// statement (`withEvents`: data-modifying CTEs, which commit with it) or transaction, so an event exists exactly when
// its change was committed.

/** A domain event as the `event` column keeps it: the event without its instant (the `at` column), values as JSON. */
const ChangeOf = <S extends Schema.Top>(value: S) => Schema.Struct({ old: value, new: value })
const StoredEvent = Schema.Union([
  Schema.Struct({ type: Schema.Literal("plan_entry.created"), email: Schema.toType(Email) }),
  Schema.Struct({
    type: Schema.Literal("preferences.updated"),
    userId: Schema.toType(UserId),
    changes: Schema.Struct({
      language: Schema.optionalKey(ChangeOf(Schema.toType(LanguageTag))),
      timezone: Schema.optionalKey(ChangeOf(Schema.toType(TimezoneOffset))),
      mfaEnabled: Schema.optionalKey(ChangeOf(Schema.Boolean))
    })
  }),
  Schema.Struct({
    type: Schema.Literal("payment_method.default_changed"),
    userId: Schema.toType(UserId),
    paymentMethodId: Schema.toType(PaymentMethodId),
    previousDefault: Schema.NullOr(Schema.toType(PaymentMethodId))
  })
])

const EventRow = Schema.Struct({
  id: Schema.String,
  subject: Schema.String,
  // bigint columns come back as text from node-postgres.
  sequence: Schema.Union([Schema.Number, Schema.NumberFromString]),
  event: StoredEvent,
  at: Schema.Date,
  attempts: Schema.Number,
  delivered_to: Schema.Array(Schema.String)
})
const eventRows = queryRows(EventRow)
type EventRow = typeof EventRow.Type

const COLUMNS = "id, subject, sequence, event, at, attempts, delivered_to"

const toRecorded = (row: EventRow): RecordedEvent => ({
  id: row.id,
  subject: row.subject,
  sequence: row.sequence,
  event: { ...row.event, at: row.at }
})

/** The `event` column of a domain event: everything but its instant. */
const storedJson = (event: DomainEvent): string => {
  const { at: _at, ...rest } = event
  return JSON.stringify(rest)
}

/**
 * A statement's events as data-modifying CTEs, written only when the CTE `guard` returns a row (the change happened):
 * each bumps its subject's sequence and inserts the event with it. One event per subject in one statement (a row is
 * updated once per statement): what every write of the domain records. `first` is the number of the first parameter
 * they take.
 */
export const eventCtes = (
  events: ReadonlyArray<DomainEvent>,
  first: number,
  guard: string | undefined
): { readonly ctes: ReadonlyArray<string>; readonly params: ReadonlyArray<unknown> } => {
  const subjects = new Set(events.map(subjectOf))
  if (subjects.size !== events.length) throw new Error("one event per subject in one statement")
  const ctes: Array<string> = []
  const params: Array<unknown> = []
  events.forEach((event, index) => {
    const n = first + params.length
    const from = guard === undefined ? "" : ` FROM (SELECT 1 FROM ${guard} LIMIT 1) AS happened`
    ctes.push(
      `sequence_${index} AS (INSERT INTO event_subjects (subject, last_sequence) SELECT $${n}, 1${from}
        ON CONFLICT (subject) DO UPDATE SET last_sequence = event_subjects.last_sequence + 1 RETURNING last_sequence)`,
      `event_${index} AS (INSERT INTO events (id, subject, sequence, owner, event, at)
        SELECT $${n + 1}::uuid, $${n}, last_sequence, $${n + 2}, $${n + 3}::jsonb, $${n + 4}::timestamptz
        FROM sequence_${index})`
    )
    params.push(subjectOf(event), newEventId(), ownerOf(event) ?? null, storedJson(event), event.at)
  })
  return { ctes, params }
}

const positionRows = queryRows(Schema.Struct({ position: Schema.Union([Schema.Number, Schema.NumberFromString]) }))
const countRows = queryRows(
  Schema.Struct({ status: Schema.Literals(["pending", "delivered", "failed"]), count: Schema.NumberFromString })
)
const unknownCursor = new UnknownCursor()

/**
 * Where the cursor `after` stands (0 without one): what `query` reads for the id `$1` and `params` after it. A text
 * that is no id as issued is no cursor (EventStore), never cast: `::uuid` would read other spellings of it too.
 */
const cursorPosition = (
  sql: SqlExecutor,
  after: string | undefined,
  query: string,
  params: ReadonlyArray<unknown>
): Effect.Effect<number, UnknownCursor | Unavailable> =>
  after === undefined
    ? Effect.succeed(0)
    : !isIssuedEventId(after)
      ? Effect.fail(unknownCursor)
      : Effect.flatMap(positionRows(sql, query, [after, ...params]), ([row]) =>
          row === undefined ? Effect.fail(unknownCursor) : Effect.succeed(row.position)
        )

export const makeEventStore = (sql: SqlExecutor) =>
  EventStore.of({
    // A user's events share their subject (`users/<id>`): its sequence orders them.
    listByOwner: (owner, after, limit) =>
      Effect.flatMap(
        cursorPosition(sql, after, "SELECT sequence AS position FROM events WHERE id = $1::uuid AND owner = $2", [
          owner
        ]),
        (sequence) =>
          Effect.map(
            eventRows(
              sql,
              `SELECT ${COLUMNS} FROM events WHERE owner = $1 AND sequence > $2 ORDER BY sequence LIMIT $3`,
              [owner, sequence, limit]
            ),
            (rows) => rows.map(toRecorded)
          )
      ),
    list: (after, limit) =>
      Effect.flatMap(cursorPosition(sql, after, "SELECT position FROM events WHERE id = $1::uuid", []), (position) =>
        Effect.map(
          eventRows(sql, `SELECT ${COLUMNS} FROM events WHERE position > $1 ORDER BY position LIMIT $2`, [
            position,
            limit
          ]),
          (rows) => rows.map(toRecorded)
        )
      ),
    // One deliverer a row at a time, across processes: the rows another holds (its lock, or its lease) are skipped.
    claimDue: (now, leaseUntil, limit) =>
      Effect.map(
        eventRows(
          sql,
          `UPDATE events SET held_until = $2::timestamptz WHERE position IN (
             SELECT position FROM events
             WHERE status = 'pending' AND next_attempt_at <= $1::timestamptz AND held_until <= $1::timestamptz
             ORDER BY position LIMIT $3 FOR UPDATE SKIP LOCKED)
           RETURNING ${COLUMNS}, position`,
          [now, leaseUntil, limit]
        ),
        (rows) =>
          rows.map((row) => ({ recorded: toRecorded(row), attempts: row.attempts, deliveredTo: row.delivered_to }))
      ),
    settle: (id, settlement) =>
      Effect.asVoid(
        sql.query(
          `UPDATE events SET status = $2, attempts = $3, delivered_to = $4::text[],
             next_attempt_at = COALESCE($5::timestamptz, '-infinity'), held_until = '-infinity'
           WHERE id = $1::uuid`,
          [id, settlement.status, settlement.attempts, settlement.deliveredTo, settlement.nextAttemptAt ?? null]
        )
      ),
    replayFailed: (now) =>
      Effect.map(
        sql.query(
          "UPDATE events SET status = 'pending', next_attempt_at = $1::timestamptz WHERE status = 'failed' RETURNING id",
          [now]
        ),
        (rows) => rows.length
      ),
    countByStatus: Effect.map(
      countRows(sql, "SELECT status, count(*)::text AS count FROM events GROUP BY status"),
      (rows) => {
        const counts: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, failed: 0 }
        for (const row of rows) counts[row.status] = row.count
        return counts
      }
    )
  })
