import { boundedMemo } from "@accord/domain/values"
import { Schema } from "effect"

/** A UTC instant on the wire: ISO 8601 with milliseconds (`2026-11-21T10:00:00.000Z`), as `Date#toISOString` writes. */
export const Timestamp = Schema.String.annotate({
  identifier: "Timestamp",
  format: "date-time",
  examples: ["2026-11-21T10:00:00.000Z"]
})

/** Epoch milliseconds -> wire form; a record's instants are written again on every response. */
const writtenAt = boundedMemo(1024, (millis: number): string => new Date(millis).toISOString())

/**
 * The wire form of an instant (`Timestamp`: what `Date#toISOString` writes). Every response carries two, and a
 * record's `created_at` (and its `updated_at` until it changes) is the same instant each time, so recent answers are
 * kept.
 */
export const toTimestamp = (instant: Date): string => writtenAt(instant.getTime())
