import { Schema } from "effect"
import { LanguageTag, PreferencesKind, PreferencesStore, TimezoneOffset } from "@accord/domain"
import { makeSqlMergeRecordStore, type MergeTable } from "./merge-records.js"
import type { SqlExecutor } from "./sql-executor.js"
import type { Turns } from "./turns.js"

const PreferencesRow = Schema.Struct({
  id: Schema.Int,
  language: Schema.toType(LanguageTag),
  timezone: Schema.toType(TimezoneOffset),
  mfa_enabled: Schema.Boolean,
  created_at: Schema.Date,
  updated_at: Schema.Date
})

/** The preferences table (migration 1) as a merge table. */
const preferencesTable: MergeTable<typeof PreferencesKind.defaults, typeof PreferencesRow.Type> = {
  kind: PreferencesKind,
  table: "preferences",
  columns: {
    language: { name: "language", type: "text" },
    timezone: { name: "timezone", type: "integer" },
    mfaEnabled: { name: "mfa_enabled", type: "boolean" }
  },
  row: PreferencesRow,
  toRecord: (row) => ({
    id: row.id,
    language: row.language,
    timezone: row.timezone,
    mfaEnabled: row.mfa_enabled,
    createdAt: row.created_at,
    updatedAt: row.updated_at
  })
}

export const makePreferencesStore = (sql: SqlExecutor, turns: Turns) =>
  PreferencesStore.of(makeSqlMergeRecordStore(sql, preferencesTable, turns))
