import { Schema } from "effect"
import { issue } from "./field-issue.js"

const MIN = -720
const MAX = 840
const STEP = 15

/**
 * Offset from UTC in minutes east, -720..840 in steps of 15 (every offset in use today). Each check aborts, so a
 * field reports only its first failing rule (docs/api.md, "Precise rules").
 */
export const TimezoneOffset = Schema.Number.check(
  Schema.makeFilter<number>(Number.isInteger, {
    ...issue("invalid_type", "must be an integer"),
    toJsonSchema: () => ({ type: "integer" })
  }).abort(),
  Schema.makeFilter<number>((minutes) => minutes >= MIN && minutes <= MAX, {
    ...issue("out_of_range", `must be between ${MIN} and ${MAX}`),
    toJsonSchema: () => ({ minimum: MIN, maximum: MAX })
  }).abort(),
  Schema.makeFilter<number>((minutes) => minutes % STEP === 0, {
    ...issue("invalid_format", `must be a multiple of ${STEP}`),
    toJsonSchema: () => ({ multipleOf: STEP })
  }).abort()
)
  .pipe(Schema.brand("TimezoneOffset"))
  .annotate({ identifier: "TimezoneOffset", description: "minutes east of UTC" })
export type TimezoneOffset = typeof TimezoneOffset.Type
