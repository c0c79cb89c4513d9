import type { Preferences, PreferencesPatch } from "@accord/domain"
import { decoderFor, describedAs, LanguageTagInput, TimezoneOffset, type ValidationError } from "@accord/domain/values"
import { Effect, Schema, SchemaTransformation } from "effect"
import { AccordEvent, EventPage } from "../events.js"
import { defineOperation, type DocsOf } from "../operation.js"
import { StrictBoolean } from "../wire/boolean.js"
import { Timestamp, toTimestamp } from "../wire/timestamp.js"
import { QueryInt } from "../wire/query-int.js"
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

/** The most events one page of the feed holds, and how many a page holds when `limit` is not sent. */
export const MAX_EVENTS_PAGE = 100
export const DEFAULT_EVENTS_PAGE = 20

/**
 * The feed's query (docs/api.md, "Events"): `after`, the id of the last event the caller has (a UUIDv7), and
 * `limit`, a decimal integer from 1 to MAX_EVENTS_PAGE written without sign, leading zero or exponent.
 */
export const EventsQuery = Schema.Struct({
  // Written as the store issued it (lower case: `isIssuedEventId`): a UUID's hex digits name it in either case.
  after: Schema.optionalKey(
    Schema.String.check(Schema.isUUID(7)).pipe(Schema.decode(SchemaTransformation.toLowerCase()))
  ),
  limit: Schema.optionalKey(QueryInt(1, MAX_EVENTS_PAGE))
}).annotate({ identifier: "EventsQuery" })
export type EventsQuery = typeof EventsQuery.Type

export const userOperations = {
  getLanguagePreferences: defineOperation({
    operationId: "getLanguagePreferences",
    method: "GET",
    path: "/users/v1/preferences/language/",
    access: "user",
    success: { status: 200, schema: PreferencesView },
    errors: ["Unavailable"],
    conditional: "ifNoneMatch",
    records: { reads: "preferences" }
  }),
  updateLanguagePreferences: defineOperation({
    operationId: "updateLanguagePreferences",
    method: "PUT",
    path: "/users/v1/preferences/language/",
    access: "user",
    body: { schema: PreferencesPatchBody, required: true },
    success: { status: 200, schema: PreferencesView },
    errors: ["PreconditionFailed", "Unavailable"],
    conditional: "ifMatchRequirable",
    records: { merges: "preferences" }
  }),
  listEvents: defineOperation({
    operationId: "listEvents",
    method: "GET",
    path: "/users/v1/events/",
    access: "user",
    query: EventsQuery,
    success: { status: 200, schema: EventPage },
    // The same events live (docs/api.md, "Events"): replayed after the resume point, then as they are recorded.
    stream: { mediaType: "text/event-stream", schema: AccordEvent, resumeParameter: "after" },
    errors: ["UnknownCursor", "Unavailable"],
    conditional: "ifNoneMatch",
    records: { lists: "events" }
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
  },
  listEvents: {
    tag: "users",
    summary: "List the user's own events (oldest first)",
    description:
      "The events of the caller's own changes (a preferences.updated or a payment_method.default_changed each), oldest first, the same envelopes the webhooks carry. A page holds `limit` events (1 to 100, default 20); `has_more` says whether a next page has some: ask for it with `after` set to the last id of this one. An `after` that is not one of the caller's events is 400 `invalid_cursor`; a query parameter not listed here, one sent twice, or a value out of bounds is 400 `invalid_query`. Needs a user credential (an application's is 403).",
    query: {
      after: {
        description:
          "The id of the last event already read (its hex digits in either case); the page starts after it. Absent: from the first.",
        example: "019a4f6e-3c2b-7d40-9a1e-5f6b7c8d9e0f"
      },
      limit: { description: "How many events, 1 to 100. Default 20.", example: 20 }
    },
    successExample: {
      data: [
        {
          specversion: "1.0",
          id: "019a4f6e-3c2b-7d40-9a1e-5f6b7c8d9e0f",
          source: "/api",
          type: "payment_method.default_changed",
          time: "2026-11-21T10:05:00.000Z",
          subject: "users/u_1",
          sequence: 1,
          datacontenttype: "application/json",
          data: { payment_method_id: "pm_2", previous_default_id: null }
        }
      ],
      has_more: false
    }
  }
}
