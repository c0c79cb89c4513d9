import { canonicalLanguageTag, LanguageTag } from "./language-tag.js"
import { TimezoneOffset } from "./values/timezone.js"
import { applyMerge, type Merge, type MergeKind, type MergeRecord } from "./merge-record.js"
import { preferencesUpdated } from "./events.js"

/** The fields of a user's preferences: a merge record (`MergeRecord`), one per user. */
export interface PreferenceFields {
  readonly language: LanguageTag
  readonly timezone: TimezoneOffset
  readonly mfaEnabled: boolean
}

/** A user's preferences record, one per user. */
export type Preferences = MergeRecord<PreferenceFields>

/** The values a new record starts with (docs/api.md: created on first read or write). */
export const defaultPreferenceValues: PreferenceFields = {
  language: LanguageTag.make("en"),
  timezone: TimezoneOffset.make(0),
  mfaEnabled: false
}

/** The preferences as a kind of merge record: what the stores' generic merge-record code needs to know. */
export const PreferencesKind: MergeKind<PreferenceFields> = {
  fields: ["language", "timezone", "mfaEnabled"],
  defaults: defaultPreferenceValues,
  events: preferencesUpdated
}

/**
 * The values a caller asks for, checked where they came in: what `updateLanguagePreferences` merges. `language` is a
 * well-formed tag as the caller wrote it (`LanguageTagInput`); the record keeps its canonical form, which the domain
 * decides (`canonicalLanguageTag`: `EN-us` and `en-US` are one value).
 */
export interface PreferencesPatch {
  readonly language?: string
  readonly timezone?: TimezoneOffset
  readonly mfaEnabled?: boolean
}

/** The write a patch asks for at `now`: the domain's decisions (the canonical tag) made, for the store to apply. */
export const preferencesMerge = (patch: PreferencesPatch, now: Date): Merge<PreferenceFields> => {
  // Field by field rather than conditional spreads: this runs on every PUT.
  const set: { -readonly [K in keyof PreferenceFields]?: PreferenceFields[K] } = {}
  if (patch.language !== undefined) set.language = canonicalLanguageTag(patch.language)
  if (patch.timezone !== undefined) set.timezone = patch.timezone
  if (patch.mfaEnabled !== undefined) set.mfaEnabled = patch.mfaEnabled
  return { set, at: now }
}

/**
 * Merges a patch into a record (`applyMerge`): `updatedAt` moves to `now` only when a value really changes, and never
 * backwards. Returns the same object when nothing changed.
 */
export const applyPatch = (current: Preferences, patch: PreferencesPatch, now: Date): Preferences =>
  applyMerge(PreferencesKind, current, preferencesMerge(patch, now))
