import type { Preferences, PreferencesPatch } from "@accord/domain"
import { decoderFor, describedAs, LanguageTagInput, TimezoneOffset, type ValidationError } from "@accord/domain/values"
import { Effect, Schema } from "effect"
import { defineOperation, type DocsOf } from "../operation.js"
import { StrictBoolean } from "../wire/boolean.js"
import { Timestamp, toTimestamp } from "../wire/timestamp.js"
import { WireInt } from "../wire/wire-int.js"

// docs/api.md, "Update language preferences (PUT)", and its read.

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

/** The wire form of a preferences record. */
export const toPreferencesView = (record: Preferences): PreferencesView => ({
  id: record.id,
  language: record.language,
  timezone: record.timezone,
  mfa_enabled: record.mfaEnabled,
  created_at: toTimestamp(record.createdAt),
  updated_at: toTimestamp(record.updatedAt)
})

/** The values a decoded PUT body asks for: what `updateLanguagePreferences` merges. */
export const toPatch = (body: PreferencesPatchBody): PreferencesPatch => {
  // Field by field rather than conditional spreads: this runs on every PUT.
  const patch: { -readonly [K in keyof PreferencesPatch]: PreferencesPatch[K] } = {}
  if (body.language !== undefined) patch.language = body.language
  if (body.timezone !== undefined) patch.timezone = body.timezone
  if (body.mfa_enabled !== undefined) patch.mfaEnabled = body.mfa_enabled
  return patch
}

// Compiled once, where it is called: a module that only names the Schema (a client's) keeps no decoder.
const decodePatchBody = /* @__PURE__ */ decoderFor(PreferencesPatchBody)

/** Wire JSON (a PUT body) to a checked patch, for callers outside HTTP; the handler decodes the same Schema. */
export const decodePreferencesPatch = (input: unknown): Effect.Effect<PreferencesPatch, ValidationError> =>
  Effect.map(decodePatchBody(input), toPatch)

export const userOperations = {
  getLanguagePreferences: defineOperation({
    operationId: "getLanguagePreferences",
    method: "GET",
    path: "/users/v1/preferences/language/",
    access: "user",
    success: { status: 200, schema: PreferencesView },
    errors: ["Unavailable"],
    conditional: "ifNoneMatch"
  }),
  updateLanguagePreferences: defineOperation({
    operationId: "updateLanguagePreferences",
    method: "PUT",
    path: "/users/v1/preferences/language/",
    access: "user",
    body: { schema: PreferencesPatchBody, required: true },
    success: { status: 200, schema: PreferencesView },
    errors: ["PreconditionFailed", "Unavailable"],
    conditional: "ifMatchRequirable"
  })
}

export const userDocs: DocsOf<typeof userOperations> = {
  getLanguagePreferences: {
    tag: "users",
    summary: "Read the user's language preferences",
    description:
      "The caller's preferences record; the first read creates it with the defaults (`language` `en`, `timezone` 0, `mfa_enabled` false). Needs a user credential (an application's is 403).",
    successExample: {
      id: 1,
      language: "en",
      timezone: 0,
      mfa_enabled: false,
      created_at: "2026-11-21T10:00:00.000Z",
      updated_at: "2026-11-21T10:00:00.000Z"
    }
  },
  updateLanguagePreferences: {
    tag: "users",
    summary: "Update the user's language preferences (merge)",
    description:
      "Sets each field the body has and keeps the others (`{}` changes nothing and returns the record). `language` is a BCP 47 tag, stored canonicalised (`EN-us` becomes `en-US`); `timezone` is minutes east of UTC, -720 to 840 in steps of 15; `mfa_enabled` is a JSON boolean. `id`, `created_at` and `updated_at` may be sent back as read and are ignored; any other field is 400. `updated_at` moves only when a value changes. Needs a user credential.",
    requestExample: { language: "pt-BR", timezone: -180, mfa_enabled: true },
    successExample: {
      id: 1,
      language: "pt-BR",
      timezone: -180,
      mfa_enabled: true,
      created_at: "2026-11-21T10:00:00.000Z",
      updated_at: "2026-11-21T10:05:00.000Z"
    },
    validationExample: {
      request: { language: "en_US", timezone: 50 },
      errors: [
        { pointer: "/language", code: "invalid_format", detail: "must be a BCP 47 language tag such as en-US" },
        { pointer: "/timezone", code: "invalid_format", detail: "must be a multiple of 15" }
      ]
    }
  }
}
