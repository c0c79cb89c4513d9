import { HashMap, Option, Ref } from "effect"
import { defaultPreferenceValues, type Preferences, PreferencesStore, type UserId } from "@accord/domain"
import type { MemoryState, PreferencesState } from "./state.js"

/** The user's record and the state that holds it, creating the record with the defaults when there is none. */
const getOrCreateIn = (
  state: PreferencesState,
  userId: UserId,
  now: Date
): readonly [record: Preferences, next: PreferencesState] =>
  Option.match(HashMap.get(state.byUser, userId), {
    onSome: (record) => [record, state] as const,
    onNone: () => {
      const record: Preferences = { id: state.nextId, ...defaultPreferenceValues, createdAt: now, updatedAt: now }
      return [record, { nextId: state.nextId + 1, byUser: HashMap.set(state.byUser, userId, record) }] as const
    }
  })

export const makePreferencesStore = (state: MemoryState) =>
  PreferencesStore.of({
    getOrCreate: (userId, now) => Ref.modify(state.preferences, (current) => getOrCreateIn(current, userId, now)),
    update: (userId, now, change) =>
      // `change` runs inside the modify, so concurrent updates of one user apply one after the other: none is lost.
      Ref.modify(state.preferences, (current) => {
        const [record, withRecord] = getOrCreateIn(current, userId, now)
        const changed = change(record)
        if (changed === record) return [record, withRecord]
        return [changed, { ...withRecord, byUser: HashMap.set(withRecord.byUser, userId, changed) }]
      })
  })
