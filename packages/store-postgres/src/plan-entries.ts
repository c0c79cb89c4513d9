import { Effect, Schema } from "effect"
import { Email, PasswordHash, PlanEntries } from "@accord/domain"
import { eventCtes } from "./events.js"
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
    // ON CONFLICT DO NOTHING: a duplicate (even one racing in from another process) neither fails nor overwrites. The
    // events are CTEs of the same statement, written only when the entry was (docs/api.md, "Events").
    insertIfAbsent: (entry, events) => {
      const recorded = eventCtes(events, 5, "inserted")
      return Effect.map(
        insertedRows(
          sql,
          `WITH inserted AS (
             INSERT INTO plan_entries (email_key, email, password_hash, created_at) VALUES ($1, $2, $3, $4::timestamptz)
             ON CONFLICT (email_key) DO NOTHING RETURNING email_key)${recorded.ctes.map((cte) => `, ${cte}`).join("")}
           SELECT email_key FROM inserted`,
          [entry.emailKey, entry.email, entry.passwordHash, entry.createdAt, ...recorded.params]
        ),
        (rows) => rows.length === 1
      )
    },
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
