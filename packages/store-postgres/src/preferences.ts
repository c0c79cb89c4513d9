import { Effect, Schema } from "effect"
import {
  defaultPreferenceValues,
  LanguageTag,
  type Preferences,
  PreferencesStore,
  TimezoneOffset,
  type UserId
} from "@accord/domain"
import { queryRows, type SqlClient, type SqlExecutor } from "./sql-executor.js"

const COLUMNS = "id, language, timezone, mfa_enabled, created_at, updated_at"

const PreferencesRow = Schema.Struct({
  id: Schema.Int,
  language: Schema.toType(LanguageTag),
  timezone: Schema.toType(TimezoneOffset),
  mfa_enabled: Schema.Boolean,
  created_at: Schema.Date,
  updated_at: Schema.Date
})
const preferencesRows = queryRows(PreferencesRow)

const toPreferences = (row: typeof PreferencesRow.Type): Preferences => ({
  id: row.id,
  language: row.language,
  timezone: row.timezone,
  mfaEnabled: row.mfa_enabled,
  createdAt: row.created_at,
  updatedAt: row.updated_at
})

const first = (rows: ReadonlyArray<typeof PreferencesRow.Type>): Preferences | undefined => {
  const row = rows[0]
  return row === undefined ? undefined : toPreferences(row)
}

/** Reads first so that a plain read does not spend a sequence value on an insert that would conflict. */
const select = (client: SqlClient, userId: UserId, forUpdate: boolean) =>
  Effect.map(
    preferencesRows(client, `SELECT ${COLUMNS} FROM preferences WHERE user_id = $1${forUpdate ? " FOR UPDATE" : ""}`, [
      userId
    ]),
    first
  )

/** Inserts the defaults; when another connection created the record meanwhile, nothing (undefined). */
const insertDefaults = (client: SqlClient, userId: UserId, now: Date) =>
  Effect.map(
    preferencesRows(
      client,
      `INSERT INTO preferences (user_id, language, timezone, mfa_enabled, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5::timestamptz, $5::timestamptz)
       ON CONFLICT (user_id) DO NOTHING RETURNING ${COLUMNS}`,
      [
        userId,
        defaultPreferenceValues.language,
        defaultPreferenceValues.timezone,
        defaultPreferenceValues.mfaEnabled,
        now
      ]
    ),
    first
  )

/**
 * The record, created when missing. A lost creation race leaves the winner's row, which the last read sees (each
 * statement of READ COMMITTED reads what is committed when it starts). With `forUpdate`, inside a transaction, the
 * row comes back locked.
 */
const getOrCreateWith = (client: SqlClient, userId: UserId, now: Date, forUpdate: boolean) =>
  Effect.gen(function* () {
    const existing = yield* select(client, userId, forUpdate)
    if (existing !== undefined) return existing
    const created = yield* insertDefaults(client, userId, now)
    if (created !== undefined) return created
    const raced = yield* select(client, userId, forUpdate)
    if (raced !== undefined) return raced
    return yield* Effect.die(new Error(`preferences of ${userId} neither inserted nor found`))
  })

export const makePreferencesStore = (sql: SqlExecutor) =>
  PreferencesStore.of({
    getOrCreate: (userId, now) => getOrCreateWith(sql, userId, now, false),
    // The row lock (FOR UPDATE) makes concurrent updates of one user, from any process, apply one after the other.
    update: (userId, now, change) =>
      sql.transaction((tx) =>
        Effect.gen(function* () {
          const current = yield* getOrCreateWith(tx, userId, now, true)
          const next = change(current)
          if (next === current) return current
          const rows = yield* preferencesRows(
            tx,
            `UPDATE preferences SET language = $2, timezone = $3, mfa_enabled = $4, updated_at = $5::timestamptz
             WHERE id = $1 RETURNING ${COLUMNS}`,
            [current.id, next.language, next.timezone, next.mfaEnabled, next.updatedAt]
          )
          return first(rows) ?? (yield* Effect.die(new Error(`preferences ${current.id} vanished while locked`)))
        })
      )
  })
