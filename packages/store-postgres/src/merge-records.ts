import { Effect, type Schema } from "effect"
import {
  applyMerge,
  type Merge,
  type MergeKind,
  type MergeRecord,
  type MergeRecordStore,
  PreconditionFailed,
  type Unavailable,
  type UserId
} from "@accord/domain"
import { eventCtes } from "./events.js"
import { queryRows, type SqlClient, type SqlExecutor } from "./sql-executor.js"
import type { Turn, Turns } from "./turns.js"

/** Where a kind of merge record lives: its table (`id serial`, `user_id` unique, the fields, `created_at`, `updated_at`). */
export interface MergeTable<F, Row> {
  readonly kind: MergeKind<F>
  readonly table: string
  /** Each field's column and its SQL type (parameters are cast to it: in `INSERT ... SELECT` nothing else types them). */
  readonly columns: { readonly [K in keyof F & string]: { readonly name: string; readonly type: string } }
  /** A row of `id, <the fields' columns>, created_at, updated_at`, as the driver gives it. */
  readonly row: Schema.Decoder<Row>
  readonly toRecord: (row: Row) => MergeRecord<F>
}

/**
 * The statements of one merge table, written once from its description. Each is a single statement, so no
 * transaction is held open across the network; the meaning is `applyMerge`'s (the store contract checks both stores
 * against it):
 *
 * - `getOrCreate`: the row, or a new one with the defaults. The INSERT runs only when the user has no row, so a read
 *   spends no sequence value (ids are 1, 2, 3, ... as in memory); a creation race is settled by `ON CONFLICT DO UPDATE`,
 *   which returns the winner's row even though this statement's snapshot predates it.
 * - `replaceIf`: a compare-and-set for every write: the caller read the row, judged a precondition (If-Match) when
 *   there is one, and computed the next values with `applyMerge`; the row is written only if it is still the version
 *   read (every field and `updated_at` compared in SQL), else no row and the caller reads again.
 *
 * A write's events (docs/api.md, "Events") are data-modifying CTEs of its compare-and-set (`eventCtes`): the CTEs of
 * one statement commit together, so no event is written without its change, and the compare-and-set knows the record
 * before and after, so it tells whether something changed. A write is a read, then that statement (and when another
 * process came between them, `lockRow` in a transaction: see `makeSqlMergeRecordStore`).
 */
export const mergeStatements = <F, Row>(spec: MergeTable<F, Row>) => {
  const fields = spec.kind.fields.map((field) => spec.columns[field])
  const names = fields.map((column) => column.name)
  const selected = ["id", ...names, "created_at", "updated_at"].join(", ")
  /** `$first`, `$first+1`, ... one per field, cast to its column's type. */
  const params = (first: number) => fields.map((column, index) => `$${first + index}::${column.type}`)
  const values = params(2)
  const insertColumns = `user_id, ${names.join(", ")}, created_at, updated_at`
  return {
    /** $1 user, $2.. the defaults (in `params(2)`'s place: no values to merge), then the instant. */
    getOrCreate: `WITH found AS (SELECT ${selected} FROM ${spec.table} WHERE user_id = $1),
      created AS (
        INSERT INTO ${spec.table} (${insertColumns})
        SELECT $1, ${values.join(", ")}, $${2 + fields.length}::timestamptz, $${2 + fields.length}::timestamptz
        WHERE NOT EXISTS (SELECT 1 FROM found)
        ON CONFLICT (user_id) DO UPDATE SET user_id = EXCLUDED.user_id
        RETURNING ${selected})
      SELECT ${selected} FROM found UNION ALL SELECT ${selected} FROM created`,
    /**
     * $1 id, $2.. the next values, then `updated_at`; then the values read, then the `updated_at` read; then the
     * events' parameters (`eventCtes`), whose CTEs `events` gives: they are written only when the row was.
     */
    replaceIf: (events: ReadonlyArray<string>) => `WITH replaced AS (
        UPDATE ${spec.table} SET ${names.map((name, index) => `${name} = ${values[index]}`).join(", ")},
          updated_at = $${2 + fields.length}::timestamptz
        WHERE id = $1 AND (${names.join(", ")}, updated_at) = (${params(3 + fields.length).join(", ")},
          $${3 + 2 * fields.length}::timestamptz)
        RETURNING ${selected})${events.map((cte) => `, ${cte}`).join("")}
      SELECT ${selected} FROM replaced`,
    /** The number of the first parameter after `replaceIf`'s own. */
    replaceIfParams: 4 + 2 * fields.length,
    /** $1 id: the row as it is, locked until the transaction ends (the writers of other processes queue on it). */
    lockRow: `SELECT ${selected} FROM ${spec.table} WHERE id = $1 FOR UPDATE`
  }
}

const always = () => true

/**
 * Any kind of merge record on a SQL table (see `mergeStatements`), its writes in the record's turn (`turns`): one
 * writer of a record at a time in this process, so a compare-and-set fails only when another process wrote between
 * its read and its write. Then the write is made again in a transaction that locks the row (`SELECT ... FOR UPDATE`:
 * the writers of other processes queue on it in the database), judged by the domain on the row as locked. Whatever
 * the contention, a write is at most six round trips: the read and the compare-and-set, then BEGIN, the locked read,
 * the write, COMMIT (docs/operations.md, "Writes under contention").
 *
 * While writers of the record queue in the turn, each leaves the record it wrote to the next, which skips the read:
 * under contention a write is one round trip. That record may be stale (another process wrote since), which costs
 * nothing but a failed compare-and-set (then the locked transaction: five round trips); an answer that writes nothing
 * (an unmet If-Match, no change) is never given from it, but from a fresh read.
 */
export const makeSqlMergeRecordStore = <F, Row>(
  sql: SqlExecutor,
  spec: MergeTable<F, Row>,
  turns: Turns
): MergeRecordStore<F> => {
  const statements = mergeStatements(spec)
  const rows = queryRows(spec.row)
  const valuesOf = (record: Partial<F>): ReadonlyArray<unknown> =>
    spec.kind.fields.map((field) => record[field] ?? null)
  const defaults = valuesOf(spec.kind.defaults)
  const one = (found: ReadonlyArray<Row>, what: string) => {
    const row = found[0]
    return row === undefined
      ? Effect.die(new Error(`${spec.table}: ${what} returned no row`))
      : Effect.succeed(spec.toRecord(row))
  }
  const getOrCreate = (userId: UserId, now: Date) =>
    Effect.flatMap(rows(sql, statements.getOrCreate, [userId, ...defaults, now]), (found) => one(found, "getOrCreate"))
  /**
   * The compare-and-set from `current` to `next`, with the change's events (docs/api.md, "Events") written by its own
   * statement, only when it wrote: the record written, or undefined when `current` is no longer the stored version.
   */
  const replaceIf = (
    client: SqlClient,
    userId: UserId,
    current: MergeRecord<F>,
    next: MergeRecord<F>
  ): Effect.Effect<MergeRecord<F> | undefined, Unavailable> => {
    const recorded = eventCtes(spec.kind.events(userId, current, next), statements.replaceIfParams, "replaced")
    return Effect.flatMap(
      rows(client, statements.replaceIf(recorded.ctes), [
        current.id,
        ...valuesOf(next),
        next.updatedAt,
        ...valuesOf(current),
        current.updatedAt,
        ...recorded.params
      ]),
      (written) => (written.length === 0 ? Effect.succeed(undefined) : one(written, "replaceIf"))
    )
  }
  /** The write made again on the row locked: no other writer can come between the read and the write. */
  const locked = (
    userId: UserId,
    id: number,
    change: Merge<F>,
    precondition: (current: MergeRecord<F>) => boolean
  ): Effect.Effect<MergeRecord<F>, PreconditionFailed | Unavailable> =>
    sql.transaction((tx) =>
      Effect.flatMap(rows(tx, statements.lockRow, [id]), (found) =>
        Effect.flatMap(
          one(found, "lockRow"),
          (current): Effect.Effect<MergeRecord<F>, PreconditionFailed | Unavailable> => {
            if (!precondition(current)) return Effect.fail(new PreconditionFailed())
            const next = applyMerge(spec.kind, current, change)
            if (next === current) return Effect.succeed(current)
            return Effect.flatMap(replaceIf(tx, userId, current, next), (written) =>
              written === undefined
                ? Effect.die(new Error(`${spec.table}: a locked row changed`))
                : Effect.succeed(written)
            )
          }
        )
      )
    )
  /** From `current` (read, or left by the turn's last writer when `fromTurn`): judged, then written. */
  const writeFrom = (
    turn: Turn<MergeRecord<F>>,
    userId: UserId,
    current: MergeRecord<F>,
    fromTurn: boolean,
    change: Merge<F>,
    precondition: (current: MergeRecord<F>) => boolean
  ): Effect.Effect<MergeRecord<F>, PreconditionFailed | Unavailable> => {
    const met = precondition(current)
    const next = met ? applyMerge(spec.kind, current, change) : current
    // Nothing to write: answered from a fresh read only.
    if (next === current) {
      if (fromTurn) return fresh(turn, userId, change, precondition)
      turn.last = current
      return met ? Effect.succeed(current) : Effect.fail(new PreconditionFailed())
    }
    return Effect.flatMap(replaceIf(sql, userId, current, next), (written) =>
      written === undefined ? locked(userId, current.id, change, precondition) : Effect.succeed(written)
    ).pipe(Effect.tap((record) => Effect.sync(() => void (turn.last = record))))
  }
  const fresh = (
    turn: Turn<MergeRecord<F>>,
    userId: UserId,
    change: Merge<F>,
    precondition: (current: MergeRecord<F>) => boolean
  ) =>
    Effect.flatMap(getOrCreate(userId, change.at), (current) =>
      writeFrom(turn, userId, current, false, change, precondition)
    )
  return {
    getOrCreate,
    // A write records its events (docs/api.md, "Events") only when it changed the record, which the compare-and-set
    // knows (the record before and after).
    update: (userId, change, precondition = always) =>
      turns.run(`${spec.table}/${userId}`, (turn: Turn<MergeRecord<F>>) =>
        Effect.suspend(() => {
          const left = turn.last
          // Forgotten until this write is known: a failure leaves the next writer a fresh read.
          turn.last = undefined
          return left === undefined
            ? fresh(turn, userId, change, precondition)
            : writeFrom(turn, userId, left, true, change, precondition)
        })
      )
  }
}
