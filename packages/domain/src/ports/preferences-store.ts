import { Context } from "effect"
import type { MergeRecordStore } from "../merge-record.js"
import type { PreferenceFields } from "../preferences.js"

/** One preferences record per user, created with `defaultPreferenceValues` on first access: a merge record's port. */
export class PreferencesStore extends Context.Service<PreferencesStore, MergeRecordStore<PreferenceFields>>()(
  "@accord/domain/PreferencesStore"
) {}
