import { Schema } from "effect"
import { issue } from "./field-issue.js"

const MIN = -720
const MAX = 840
const STEP = 15

/** Offset from UTC in minutes east, -720..840 in steps of 15 (every offset in use today). */
export const TimezoneOffset = Schema.Number.pipe(
  Schema.filter(Number.isInteger, issue("invalid_type", "must be an integer")),
  Schema.filter((minutes) => minutes >= MIN && minutes <= MAX, issue("out_of_range", `must be between ${MIN} and ${MAX}`)),
  Schema.filter((minutes) => minutes % STEP === 0, issue("invalid_format", `must be a multiple of ${STEP}`)),
  Schema.brand("TimezoneOffset")
).annotations({
  identifier: "TimezoneOffset",
  description: "an integer",
  jsonSchema: { type: "integer", minimum: MIN, maximum: MAX, multipleOf: STEP, description: "minutes east of UTC" }
})
export type TimezoneOffset = typeof TimezoneOffset.Type
