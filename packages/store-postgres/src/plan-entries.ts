import { Effect, Schema } from "effect"
import { Email, PasswordHash, PlanEntries } from "@accord/domain"
import { queryRows, type SqlExecutor } from "./sql-executor.js"

const planEntryRows = queryRows(
  Schema.Struct({
    email: Schema.toType(Email),
    email_key: Schema.String,
    password_hash: Schema.toType(PasswordHash),
    created_at: Schema.Date
  })
)
const insertedRows = queryRows(Schema.Struct({ email_key: Schema.String }))

export const makePlanEntries = (sql: SqlExecutor) =>
  PlanEntries.of({
    // ON CONFLICT DO NOTHING: a duplicate (even one racing in from another process) neither fails nor overwrites.
    insertIfAbsent: (entry) =>
      Effect.map(
        insertedRows(
          sql,
          `INSERT INTO plan_entries (email_key, email, password_hash, created_at) VALUES ($1, $2, $3, $4::timestamptz)
           ON CONFLICT (email_key) DO NOTHING RETURNING email_key`,
          [entry.emailKey, entry.email, entry.passwordHash, entry.createdAt]
        ),
        (rows) => rows.length === 1
      ),
    findByEmailKey: (emailKey) =>
      Effect.map(
        planEntryRows(
          sql,
          "SELECT email, email_key, password_hash, created_at FROM plan_entries WHERE email_key = $1",
          [emailKey]
        ),
        (rows) => {
          const row = rows[0]
          return row === undefined
            ? undefined
            : { email: row.email, emailKey: row.email_key, passwordHash: row.password_hash, createdAt: row.created_at }
        }
      )
  })
