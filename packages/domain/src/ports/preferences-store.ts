import { Context, type Effect } from "effect"
import type { Unavailable } from "../errors.js"
import type { UserId } from "../values/ids.js"
import type { Preferences } from "../preferences.js"

/** One preferences record per user, created with `defaultPreferenceValues` on first access. */
export class PreferencesStore extends Context.Service<
  PreferencesStore,
  {
    /** The user's record, created (createdAt = updatedAt = now) when the user has none yet. */
    readonly getOrCreate: (userId: UserId, now: Date) => Effect.Effect<Preferences, Unavailable>
    /**
     * Atomically: get-or-create the record, apply `change` (a pure function), and persist its result when it is a
     * different object. Concurrent updates of one user serialise; none is lost. Returns the stored record.
     */
    readonly update: (
      userId: UserId,
      now: Date,
      change: (current: Preferences) => Preferences
    ) => Effect.Effect<Preferences, Unavailable>
  }
>()("@accord/domain/PreferencesStore") {}
