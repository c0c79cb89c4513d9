import { Schema } from "effect"

/** A UTC instant on the wire: ISO 8601 with milliseconds (`2026-11-21T10:00:00.000Z`), as `Date#toISOString` writes. */
export const Timestamp = Schema.String.annotate({
  identifier: "Timestamp",
  format: "date-time",
  examples: ["2026-11-21T10:00:00.000Z"]
})
