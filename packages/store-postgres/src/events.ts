import { Effect, Schema } from "effect"
import {
  type DeliveryStatus,
  type DomainEvent,
  EventStore,
  EventWakeups,
  isIssuedEventId,
  newEventId,
  ownerOf,
  readStoredEvent,
  type RecordedEvent,
  storedEventOf,
  subjectOf,
  UnknownCursor,
  type Unavailable
} from "@accord/domain"
import { queryRows, type SqlExecutor } from "./sql-executor.js"

// docs/api.md, "Events": the SQL store's outbox (migration 5), delivered per sink (migration 6). A change's events are written by the change's own
// statement (`withEvents`: data-modifying CTEs, which commit with it) or transaction, so an event exists exactly when
// its change was committed.

const EventRow = Schema.Struct({
  id: Schema.String,
  subject: Schema.String,
  // bigint columns come back as text from node-postgres.
  sequence: Schema.Union([Schema.Number, Schema.NumberFromString]),
  // What `storedEventOf` kept, read back by the domain's own Schema of its type (`readStoredEvent`).
  event: Schema.Unknown,
  at: Schema.Date
})
type EventRow = typeof EventRow.Type

const COLUMNS = "id, subject, sequence, event, at"

const deliveryRows = queryRows(Schema.Struct({ ...EventRow.fields, attempts: Schema.Number, since: Schema.Date }))

/** Reports a row whose event this version cannot read: it is skipped (docs/operations.md, "Events"). */
export type OnUnreadableEvent = (id: string, why: string) => void

/** Where a row nothing reads is reported when the host names no place: effect's logger. */
const logUnreadable: OnUnreadableEvent = (id, why) =>
  Effect.runSync(Effect.logWarning("an event the store cannot read is skipped", { id, why }))

/** The rows' events, each read by its type's Schema; a row that none reads is reported and left out. */
const recordedOf =
  (report: OnUnreadableEvent) =>
  <R extends EventRow>(rows: ReadonlyArray<R>): ReadonlyArray<{ readonly row: R; readonly recorded: RecordedEvent }> =>
    rows.flatMap((row) => {
      const read = readStoredEvent(row.event, row.at)
      if (!read.ok) {
        report(row.id, read.why)
        return []
      }
      return [{ row, recorded: { id: row.id, subject: row.subject, sequence: row.sequence, event: read.event } }]
    })

/** A listed row and where it stands in its order (`key`: its sequence in a feed, its position in the log). */
const positionedRows = queryRows(
  EventRow.mapFields((fields) => ({ ...fields, key: Schema.Union([Schema.Number, Schema.NumberFromString]) }))
)

/**
 * Up to `limit` readable events after `from` in one order: a row none reads is left out, and the page reads on past
 * it, so that a full page stays full (the feed's `has_more` holds).
 */
const readablePage = (
  report: OnUnreadableEvent,
  fetch: (
    from: number,
    count: number
  ) => Effect.Effect<ReadonlyArray<EventRow & { readonly key: number }>, Unavailable>,
  from: number,
  limit: number
): Effect.Effect<ReadonlyArray<RecordedEvent>, Unavailable> =>
  Effect.flatMap(fetch(from, limit), (rows) => {
    const read = recordedOf(report)(rows).map(({ recorded }) => recorded)
    const last = rows.at(-1)
    return read.length === rows.length || rows.length < limit || last === undefined
      ? Effect.succeed(read)
      : Effect.map(readablePage(report, fetch, last.key, limit - read.length), (more) => [...read, ...more])
  })

/** The channel every process's live streams listen on (docs/api.md, "Events"); the payload is the event's owner. */
export const EVENTS_CHANNEL = "accord_events"

/**
 * The owner column's value `owner` (a parameter), with a notification of it on `EVENTS_CHANNEL` issued by the same
 * statement: PostgreSQL delivers it when, and only if, the write commits. The CASE evaluates pg_notify (volatile,
 * never folded) for the row it inserts and yields the owner either way.
 */
const notifying = (owner: string): string =>
  `CASE WHEN pg_notify('${EVENTS_CHANNEL}', ${owner}::text) IS NULL THEN ${owner}::text ELSE ${owner}::text END`

/** The `event` column of a domain event: everything but its instant. */
const storedJson = (event: DomainEvent): string => JSON.stringify(storedEventOf(event))

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
        SELECT $${n + 1}::uuid, $${n}, last_sequence, ${ownerOf(event) === undefined ? `$${n + 2}` : notifying(`$${n + 2}`)}, $${n + 3}::jsonb, $${n + 4}::timestamptz
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
const howMany = queryRows(Schema.Struct({ count: Schema.Number }))
const backlogRows = queryRows(Schema.Struct({ sink: Schema.String, pending: Schema.Number, failed: Schema.Number }))
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

const countOf = (rows: ReadonlyArray<{ readonly count: number }>): number => rows[0]?.count ?? 0

export const makeEventStore = (
  sql: SqlExecutor,
  onUnreadable: OnUnreadableEvent = logUnreadable,
  wakeups: EventWakeups = new EventWakeups()
) =>
  EventStore.of({
    // Woken by the database's notifications where the executor listens (`SqlExecutor.listen`); the stream's own
    // periodic read covers every other case (docs/api.md, "Events").
    subscribe: (owner, wake) => Effect.sync(() => wakeups.subscribe(owner, wake)),
    // A user's events share their subject (`users/<id>`): its sequence orders them.
    listByOwner: (owner, after, limit) =>
      Effect.flatMap(
        cursorPosition(sql, after, "SELECT sequence AS position FROM events WHERE id = $1::uuid AND owner = $2", [
          owner
        ]),
        (sequence) =>
          readablePage(
            onUnreadable,
            (from, count) =>
              positionedRows(
                sql,
                `SELECT ${COLUMNS}, sequence AS key FROM events WHERE owner = $1 AND sequence > $2 ORDER BY sequence LIMIT $3`,
                [owner, from, count]
              ),
            sequence,
            limit
          )
      ),
    list: (after, limit) =>
      Effect.flatMap(cursorPosition(sql, after, "SELECT position FROM events WHERE id = $1::uuid", []), (position) =>
        readablePage(
          onUnreadable,
          (from, count) =>
            positionedRows(
              sql,
              `SELECT ${COLUMNS}, position AS key FROM events WHERE position > $1 ORDER BY position LIMIT $2`,
              [from, count]
            ),
          position,
          limit
        )
      ),
    // One statement: the events no other dispatch holds, marked dispatched, each with a row per sink. An event
    // pending from before migration 6 keeps the sinks that took it then (`delivered_to`), and its give-up clock starts
    // at its last replay (`next_attempt_at`) when that is later than its change.
    dispatch: (sinks, limit) =>
      Effect.map(
        howMany(
          sql,
          `WITH picked AS (
             SELECT position, at, next_attempt_at, delivered_to FROM events
             WHERE status = 'pending' AND NOT dispatched
             ORDER BY position LIMIT $2 FOR UPDATE SKIP LOCKED),
           deliveries AS (
             INSERT INTO event_deliveries (position, sink, status, since)
             SELECT picked.position, sink,
               CASE WHEN sink = ANY (picked.delivered_to) THEN 'delivered' ELSE 'pending' END,
               GREATEST(picked.at, picked.next_attempt_at)
             FROM picked CROSS JOIN unnest($1::text[]) AS sink
             ON CONFLICT (position, sink) DO NOTHING),
           marked AS (
             UPDATE events AS e SET dispatched = true,
               status = CASE WHEN $1::text[] <@ e.delivered_to THEN 'delivered' ELSE 'pending' END
             FROM picked WHERE e.position = picked.position
             RETURNING e.position)
           SELECT count(*)::int AS count FROM marked`,
          [sinks, limit]
        ),
        countOf
      ),
    // A sink no longer configured (or an endpoint whose URL, and so its name, changed) would hold its pending
    // deliveries for ever: they go to the configured sinks, and their events' statuses are counted again. The events'
    // rows are locked first, as `accord_settle_delivery` locks them, so that a settlement of a moved delivery (by a
    // process still running the old configuration) waits rather than deadlocks.
    retarget: (sinks) =>
      sql.transaction((tx) =>
        Effect.gen(function* () {
          const locked = yield* positionRows(
            tx,
            `SELECT position FROM events WHERE position IN (
               SELECT position FROM event_deliveries WHERE status = 'pending' AND NOT (sink = ANY ($1::text[])))
             ORDER BY position FOR NO KEY UPDATE`,
            [sinks]
          )
          if (locked.length === 0) return 0
          const positions = locked.map((row) => row.position)
          const moved = yield* positionRows(
            tx,
            `WITH orphaned AS (
               DELETE FROM event_deliveries
               WHERE position = ANY ($2::bigint[]) AND status = 'pending' AND NOT (sink = ANY ($1::text[]))
               RETURNING position, since),
             adopted AS (
               INSERT INTO event_deliveries (position, sink, status, since)
               SELECT orphaned.position, kept.sink, 'pending', min(orphaned.since)
               FROM orphaned CROSS JOIN unnest($1::text[]) AS kept (sink)
               GROUP BY orphaned.position, kept.sink
               ON CONFLICT (position, sink) DO NOTHING)
             SELECT DISTINCT position FROM orphaned`,
            [sinks, positions]
          )
          yield* tx.query(
            `UPDATE events AS e SET status = outcome.status FROM (
               SELECT position, CASE WHEN bool_or(status = 'pending') THEN 'pending'
                                     WHEN bool_or(status = 'failed') THEN 'failed'
                                     ELSE 'delivered' END AS status
               FROM event_deliveries WHERE position = ANY ($1::bigint[]) GROUP BY position) AS outcome
             WHERE e.position = outcome.position AND e.status <> outcome.status`,
            [moved.map((row) => row.position)]
          )
          return moved.length
        })
      ),
    // One deliverer a row at a time, across processes: the rows another holds (its lock, or its claim) are skipped.
    // The sink's own rows only, by its index: another sink's backlog costs this one nothing.
    claimDue: (sink, now, leaseUntil, limit) =>
      Effect.map(
        deliveryRows(
          sql,
          `WITH due AS (
             SELECT position FROM event_deliveries
             WHERE sink = $1 AND status = 'pending' AND due_at <= $2::timestamptz
             ORDER BY due_at, position LIMIT $4 FOR UPDATE SKIP LOCKED),
           claimed AS (
             UPDATE event_deliveries AS d SET due_at = $3::timestamptz FROM due
             WHERE d.sink = $1 AND d.position = due.position
             RETURNING d.position, d.attempts, d.since)
           SELECT e.id, e.subject, e.sequence, e.event, e.at, claimed.attempts, claimed.since
           FROM claimed JOIN events AS e ON e.position = claimed.position ORDER BY claimed.position`,
          [sink, now, leaseUntil, limit]
        ),
        // A row none reads stays pending and is reported each time it is claimed: a version that knows it delivers it.
        (rows) =>
          recordedOf(onUnreadable)(rows).map(({ row, recorded }) => ({
            recorded,
            sink,
            attempts: row.attempts,
            since: row.since
          }))
      ),
    settle: (eventId, sink, settlement) =>
      Effect.asVoid(
        sql.query("SELECT accord_settle_delivery($1::uuid, $2, $3, $4, $5::timestamptz)", [
          eventId,
          sink,
          settlement.status,
          settlement.attempts,
          settlement.nextAttemptAt ?? null
        ])
      ),
    // A failed event from before migration 6 has no delivery rows: pending again and not dispatched, it is dispatched
    // anew, its give-up clock from now (`next_attempt_at`).
    replayFailed: (now) =>
      Effect.map(
        howMany(
          sql,
          `WITH deliveries AS (
             UPDATE event_deliveries
             SET status = 'pending', attempts = 0, since = $1::timestamptz, due_at = $1::timestamptz
             WHERE status = 'failed'),
           replayed AS (
             UPDATE events SET status = 'pending', next_attempt_at = $1::timestamptz WHERE status = 'failed'
             RETURNING position)
           SELECT count(*)::int AS count FROM replayed`,
          [now]
        ),
        countOf
      ),
    countByStatus: Effect.map(
      countRows(sql, "SELECT status, count(*)::text AS count FROM events GROUP BY status"),
      (rows) => {
        const counts: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, failed: 0 }
        for (const row of rows) counts[row.status] = row.count
        return counts
      }
    ),
    // Each count through its partial index: the delivered rows, most of the table, are never read.
    countBySink: backlogRows(
      sql,
      `SELECT sink, sum(pending)::int AS pending, sum(failed)::int AS failed FROM (
         SELECT sink, count(*) AS pending, 0 AS failed FROM event_deliveries WHERE status = 'pending' GROUP BY sink
         UNION ALL
         SELECT sink, 0, count(*) FROM event_deliveries WHERE status = 'failed' GROUP BY sink) AS counts
       GROUP BY sink ORDER BY sink`
    ),
    // A small batch of rows no other statement holds: a write never waits for it (it inserts new rows), and its
    // delivery rows go with it (ON DELETE CASCADE).
    pruneDelivered: (before, limit) =>
      Effect.map(
        howMany(
          sql,
          `WITH gone AS (
             DELETE FROM events WHERE position IN (
               SELECT position FROM events WHERE status = 'delivered' AND at < $1::timestamptz
               ORDER BY at LIMIT $2 FOR UPDATE SKIP LOCKED)
             RETURNING 1)
           SELECT count(*)::int AS count FROM gone`,
          [before, limit]
        ),
        countOf
      )
  })
