import { Schema } from "effect"

/** A UTC instant on the wire: ISO 8601 with milliseconds (`2026-11-21T10:00:00.000Z`), as `Date#toISOString` writes. */
export const Timestamp = Schema.String.annotations({
  identifier: "Timestamp",
  jsonSchema: { type: "string", format: "date-time", examples: ["2026-11-21T10:00:00.000Z"] }
})

const CACHE_LIMIT = 1024
/** Epoch milliseconds -> wire form. Bounded; a record's instants are written again on every response. */
const written = new Map<number, string>()

/**
 * The wire form of an instant (what `Date#toISOString` writes). Every response carries two, and a record's
 * `created_at` (and its `updated_at` until it changes) is the same instant each time, so recent answers are kept.
 */
export const toTimestamp = (instant: Date): string => {
  const millis = instant.getTime()
  let text = written.get(millis)
  if (text === undefined) {
    text = instant.toISOString()
    if (written.size >= CACHE_LIMIT) written.clear()
    written.set(millis, text)
  }
  return text
}
