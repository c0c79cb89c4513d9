import { Effect } from "effect"
import type { PreconditionFailed, Unavailable } from "../errors.js"
import type { UserId } from "../values/ids.js"
import { type Preferences, type PreferencesPatch, preferencesMerge } from "../preferences.js"
import { PreferencesStore } from "../ports/preferences-store.js"
import { now } from "./now.js"

// Plain pipelines, no span: these run once per request, and a generator's steps and a span with its stack capture
// cost more than the use case itself (bench/RESULTS.md). A tracing host wraps every use case in a span named by its
// operation (docs/operations.md, "Traces").

/** The user's preferences, created with the defaults on first access. */
export const getLanguagePreferences = (userId: UserId): Effect.Effect<Preferences, Unavailable, PreferencesStore> =>
  Effect.flatMap(PreferencesStore, (store) => Effect.flatMap(now, (at) => store.getOrCreate(userId, at)))

/**
 * Merges checked values into the user's preferences (docs/api.md, "Update language preferences (PUT)"). With
 * `precondition` (an HTTP If-Match): the record as it is must meet it, judged by the store in the write's atomic
 * step, else PreconditionFailed and nothing changed.
 */
export const updateLanguagePreferences = (
  userId: UserId,
  patch: PreferencesPatch,
  precondition?: (current: Preferences) => boolean
): Effect.Effect<Preferences, PreconditionFailed | Unavailable, PreferencesStore> =>
  Effect.flatMap(PreferencesStore, (store) =>
    Effect.flatMap(now, (at) => store.update(userId, preferencesMerge(patch, at), precondition))
  )
