import { Schema } from "effect"
import { StrictBoolean } from "./fields/boolean.js"
import { describedAs } from "./fields/json-schema.js"
import { LanguageTagInput } from "./fields/language.js"
import { Timestamp } from "./fields/timestamp.js"
import { TimezoneOffset } from "./fields/timezone.js"
import { WireInt } from "./fields/wire-int.js"

/**
 * Read-only fields: accepted whatever their type or value, then ignored (docs/api.md, "Precise rules"). Documented as
 * a schema every JSON value satisfies (no `type`: a list of all six types would need `items` for its `array` to lint)
 * and `readOnly`, the JSON Schema word for "the server owns this value": API reference pages leave such fields out of
 * the request examples they pre-fill, so "Execute" sends none of them.
 */
const ReadOnly = Schema.optionalKey(
  // Already in JSON form (no codec to derive), so the generated JSON Schema is the fragment below.
  Schema.declare((_: unknown): _ is unknown => true, { toCodecJson: () => undefined })
    .check(
      describedAs({
        readOnly: true,
        description: "Read-only: set by the server. Accepted whatever its value, and ignored."
      })
    )
    .annotate({ identifier: "ReadOnlyField" })
)

/**
 * The PUT body, in wire form (snake_case). Every field is optional (merge semantics); unknown fields are rejected
 * by the decoder's `onExcessProperty: "error"`. Exact optionals: JSON has no `undefined`, and without it a field is
 * decoded by its own schema rather than by a union with `undefined` (half the decoding work and allocation).
 */
export const PreferencesPatchBody = Schema.Struct({
  id: ReadOnly,
  language: Schema.optionalKey(LanguageTagInput),
  timezone: Schema.optionalKey(TimezoneOffset),
  mfa_enabled: Schema.optionalKey(StrictBoolean),
  created_at: ReadOnly,
  updated_at: ReadOnly
}).annotate({ identifier: "PreferencesUpdate" })
export type PreferencesPatchBody = typeof PreferencesPatchBody.Type

/** The wire form of a preferences record (docs/api.md, "Precise rules"). */
export const PreferencesView = Schema.Struct({
  id: WireInt,
  language: Schema.String,
  timezone: WireInt,
  mfa_enabled: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotate({ identifier: "Preferences" })
export type PreferencesView = typeof PreferencesView.Type
