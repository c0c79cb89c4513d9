import {
  MASKED_PASSWORD,
  PreferencesPatchBody,
  type Email,
  type PaymentMethodView,
  type PlanEntryView,
  type PreferencesView,
  type TimezoneOffset
} from "@accord/contract"
import { Effect } from "effect"
import { boundedMemo } from "../bounded-memo.js"
import { decoderFor } from "../domain/decode.js"
import { canonicalLanguageTag, type LanguageTag } from "../domain/language.js"
import type { ValidationError } from "../domain/errors.js"
import type { PaymentMethod } from "../domain/payment-method.js"
import type { Preferences, PreferencesPatch } from "../domain/preferences.js"

// Between the domain's records and the contract's wire forms (snake_case, docs/api.md "Precise rules"): what the
// implementation map answers with, and what a PUT body asks of the domain.

/** Epoch milliseconds -> wire form; a record's instants are written again on every response. */
const writtenAt = boundedMemo(1024, (millis: number): string => new Date(millis).toISOString())

/**
 * The wire form of an instant (`Timestamp`: what `Date#toISOString` writes). Every response carries two, and a
 * record's `created_at` (and its `updated_at` until it changes) is the same instant each time, so recent answers are
 * kept.
 */
export const toTimestamp = (instant: Date): string => writtenAt(instant.getTime())

/** The wire form of a preferences record. */
export const toPreferencesView = (record: Preferences): PreferencesView => ({
  id: record.id,
  language: record.language,
  timezone: record.timezone,
  mfa_enabled: record.mfaEnabled,
  created_at: toTimestamp(record.createdAt),
  updated_at: toTimestamp(record.updatedAt)
})

/** The wire form of a payment method. */
export const toPaymentMethodView = (method: PaymentMethod): PaymentMethodView => ({
  id: method.id,
  is_default: method.isDefault,
  created_at: toTimestamp(method.createdAt),
  updated_at: toTimestamp(method.updatedAt)
})

/** The wire form of a plan entry: its address, and the password masked (it is never returned). */
export const toPlanEntryView = (entry: { readonly email: Email }): PlanEntryView => ({
  email: entry.email,
  password: MASKED_PASSWORD
})

/** The values a decoded PUT body asks for: what `updateLanguagePreferences` merges. */
export const toPatch = (body: PreferencesPatchBody): PreferencesPatch => {
  // Field by field rather than conditional spreads: this runs on every PUT.
  const patch: { language?: LanguageTag; timezone?: TimezoneOffset; mfaEnabled?: boolean } = {}
  if (body.language !== undefined) patch.language = canonicalLanguageTag(body.language)
  if (body.timezone !== undefined) patch.timezone = body.timezone
  if (body.mfa_enabled !== undefined) patch.mfaEnabled = body.mfa_enabled
  return patch
}

const decodePatchBody = decoderFor(PreferencesPatchBody)

/** Wire JSON (a PUT body) to a checked patch, for callers outside HTTP; the handler decodes the same Schema. */
export const decodePreferencesPatch = (input: unknown): Effect.Effect<PreferencesPatch, ValidationError> =>
  Effect.map(decodePatchBody(input), toPatch)
