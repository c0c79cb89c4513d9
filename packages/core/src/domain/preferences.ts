import { Effect, Schema } from "effect"
import { decoderFor } from "./decode.js"
import type { ValidationError } from "./errors.js"
import { LanguageTag } from "./language.js"
import { TimezoneOffset } from "./timezone.js"
import { StrictBoolean } from "./boolean.js"
import { notBefore, Timestamp, toTimestamp } from "./timestamp.js"
import { describedAs } from "./json-schema.js"
import { WireInt } from "./wire-int.js"

/** A user's preferences record, one per user. */
export interface Preferences {
  readonly id: number
  readonly language: LanguageTag
  readonly timezone: TimezoneOffset
  readonly mfaEnabled: boolean
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** The values a new record starts with (docs/api.md: created on first read or write). */
export const defaultPreferenceValues = {
  language: LanguageTag.make("en"),
  timezone: TimezoneOffset.make(0),
  mfaEnabled: false
} as const

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
  language: Schema.optionalKey(LanguageTag),
  timezone: Schema.optionalKey(TimezoneOffset),
  mfa_enabled: Schema.optionalKey(StrictBoolean),
  created_at: ReadOnly,
  updated_at: ReadOnly
}).annotate({ identifier: "PreferencesUpdate" })
export type PreferencesPatchBody = typeof PreferencesPatchBody.Type

/** The values a PUT asks for, checked: what `updateLanguagePreferences` merges. */
export interface PreferencesPatch {
  readonly language?: LanguageTag
  readonly timezone?: TimezoneOffset
  readonly mfaEnabled?: boolean
}

export const toPatch = (body: PreferencesPatchBody): PreferencesPatch => {
  // Field by field rather than conditional spreads: this runs on every PUT.
  const patch: { language?: LanguageTag; timezone?: TimezoneOffset; mfaEnabled?: boolean } = {}
  if (body.language !== undefined) patch.language = body.language
  if (body.timezone !== undefined) patch.timezone = body.timezone
  if (body.mfa_enabled !== undefined) patch.mfaEnabled = body.mfa_enabled
  return patch
}

/**
 * Merges a patch into a record. `updatedAt` moves to `now` only when a value really changes, so a repeated PUT is
 * a no-op, and never backwards: `now` is taken before the store's lock, so a write that waited for another may carry
 * an earlier instant than the one stored (docs/api.md, "Precise rules"). `id` and `createdAt` never change. Returns the
 * same object when nothing changed.
 */
export const applyPatch = (current: Preferences, patch: PreferencesPatch, now: Date): Preferences => {
  const language = patch.language ?? current.language
  const timezone = patch.timezone ?? current.timezone
  const mfaEnabled = patch.mfaEnabled ?? current.mfaEnabled
  // Plain comparisons: a tag is a string and an offset a number, brands aside.
  if (language === current.language && timezone === current.timezone && mfaEnabled === current.mfaEnabled)
    return current
  // A literal rather than a spread: this runs on every PUT that changes something.
  return {
    id: current.id,
    language,
    timezone,
    mfaEnabled,
    createdAt: current.createdAt,
    updatedAt: notBefore(now, current.updatedAt)
  }
}

/** The wire form of a record (docs/api.md, "Precise rules"). */
export const PreferencesView = Schema.Struct({
  id: WireInt,
  language: Schema.String,
  timezone: WireInt,
  mfa_enabled: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotate({ identifier: "Preferences" })
export type PreferencesView = typeof PreferencesView.Type

export const toPreferencesView = (record: Preferences): PreferencesView => ({
  id: record.id,
  language: record.language,
  timezone: record.timezone,
  mfa_enabled: record.mfaEnabled,
  created_at: toTimestamp(record.createdAt),
  updated_at: toTimestamp(record.updatedAt)
})

const decodePatchBody = decoderFor(PreferencesPatchBody)

/** Wire JSON (a PUT body) to a checked patch, for callers outside HTTP; the handler decodes the same Schema. */
export const decodePreferencesPatch = (input: unknown): Effect.Effect<PreferencesPatch, ValidationError> =>
  Effect.map(decodePatchBody(input), toPatch)
