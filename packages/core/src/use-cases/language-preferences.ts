import { Effect } from "effect"
import type { Unavailable } from "../domain/errors.js"
import type { UserId } from "../domain/ids.js"
import { applyPatch, type Preferences, type PreferencesPatch } from "../domain/preferences.js"
import { PreferencesStore } from "../ports/preferences-store.js"
import { now } from "./now.js"

// Plain pipelines, no span: these run once per request, and a generator's steps and a span with its stack capture
// cost more than the use case itself (bench/RESULTS.md). A tracing host wraps every use case in a span named by its
// operation (docs/operations.md, "Traces").

/** The user's preferences, created with the defaults on first access. */
export const getLanguagePreferences = (userId: UserId): Effect.Effect<Preferences, Unavailable, PreferencesStore> =>
  Effect.flatMap(PreferencesStore, (store) => Effect.flatMap(now, (at) => store.getOrCreate(userId, at)))

/** Merges checked values into the user's preferences (docs/api.md, "Update language preferences (PUT)"). */
export const updateLanguagePreferences = (
  userId: UserId,
  patch: PreferencesPatch
): Effect.Effect<Preferences, Unavailable, PreferencesStore> =>
  Effect.flatMap(PreferencesStore, (store) =>
    Effect.flatMap(now, (at) => store.update(userId, at, (current) => applyPatch(current, patch, at)))
  )
