import { Effect } from "effect"
import { decoderFor } from "../domain/decode.js"
import type { UserId } from "../domain/ids.js"
import { applyPatch, PreferencesPatchBody, toPatch } from "../domain/preferences.js"
import { PreferencesStore } from "../ports/preferences-store.js"
import { now } from "./now.js"

const decodePatch = decoderFor(PreferencesPatchBody)

// Untraced: these run once per request, and a span with its stack capture costs more than the use case itself
// (bench/RESULTS.md). A host that wants a span wraps the call: `Effect.withSpan(updateLanguagePreferences(...), name)`.

/** The user's preferences, created with the defaults on first access. */
export const getLanguagePreferences = Effect.fnUntraced(function* (userId: UserId) {
  const store = yield* PreferencesStore
  return yield* store.getOrCreate(userId, yield* now)
})

/**
 * Merges `{ language?, timezone?, mfa_enabled? }` into the user's preferences. Read-only fields (`id`,
 * `created_at`, `updated_at`) are accepted and ignored; unknown fields are rejected.
 */
export const updateLanguagePreferences = Effect.fnUntraced(function* (
  userId: UserId,
  input: unknown
) {
  const patch = toPatch(yield* decodePatch(input))
  const store = yield* PreferencesStore
  const at = yield* now
  return yield* store.update(userId, at, (current) => applyPatch(current, patch, at))
})
