import { canonicalLanguageTag, LanguageTag } from "./language-tag.js"
import { TimezoneOffset } from "./values/timezone.js"
import { notBefore } from "./timestamp.js"

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
 * The values a caller asks for, checked where they came in: what `updateLanguagePreferences` merges. `language` is a
 * well-formed tag as the caller wrote it (`LanguageTagInput`); the record keeps its canonical form, which the domain
 * decides (`canonicalLanguageTag`: `EN-us` and `en-US` are one value).
 */
export interface PreferencesPatch {
  readonly language?: string
  readonly timezone?: TimezoneOffset
  readonly mfaEnabled?: boolean
}

/**
 * Merges a patch into a record. `updatedAt` moves to `now` only when a value really changes, so a repeated PUT is
 * a no-op, and never backwards: `now` is taken before the store's lock, so a write that waited for another may carry
 * an earlier instant than the one stored (docs/api.md, "Precise rules"). `id` and `createdAt` never change. Returns the
 * same object when nothing changed.
 */
export const applyPatch = (current: Preferences, patch: PreferencesPatch, now: Date): Preferences => {
  const language = patch.language === undefined ? current.language : canonicalLanguageTag(patch.language)
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
