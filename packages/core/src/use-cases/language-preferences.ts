import { Effect } from "effect"
import { decoderFor } from "../domain/decode.js"
import type { UserId } from "../domain/ids.js"
import type { Unavailable, ValidationError } from "../domain/errors.js"
import { applyPatch, PreferencesPatchBody, toPatch, type Preferences } from "../domain/preferences.js"
import { PreferencesStore } from "../ports/preferences-store.js"
import { now } from "./now.js"

const decodePatch = decoderFor(PreferencesPatchBody)

// Plain pipelines, no span: these run once per request, and a generator's steps and a span with its stack capture
// cost more than the use case itself (bench/RESULTS.md). A host that wants a span wraps the call:
// `Effect.withSpan(updateLanguagePreferences(...), name)`.

/** The user's preferences, created with the defaults on first access. */
export const getLanguagePreferences = (userId: UserId): Effect.Effect<Preferences, Unavailable, PreferencesStore> =>
  Effect.flatMap(PreferencesStore, (store) => Effect.flatMap(now, (at) => store.getOrCreate(userId, at)))

/**
 * Merges `{ language?, timezone?, mfa_enabled? }` into the user's preferences. Read-only fields (`id`,
 * `created_at`, `updated_at`) are accepted and ignored; unknown fields are rejected.
 */
export const updateLanguagePreferences = (
  userId: UserId,
  input: unknown
): Effect.Effect<Preferences, ValidationError | Unavailable, PreferencesStore> =>
  Effect.flatMap(decodePatch(input), (body) => {
    const patch = toPatch(body)
    return Effect.flatMap(PreferencesStore, (store) =>
      Effect.flatMap(now, (at) => store.update(userId, at, (current) => applyPatch(current, patch, at)))
    )
  })
