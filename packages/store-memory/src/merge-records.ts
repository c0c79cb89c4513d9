import { Effect, HashMap, Option, Ref } from "effect"
import {
  applyMerge,
  type MergeKind,
  type MergeRecord,
  type MergeRecordStore,
  newMergeRecord,
  PreconditionFailed,
  type UserId
} from "@accord/domain"
import type { MemoryEventLog } from "./events.js"

/** The records of one kind of merge record (`MergeRecord`): one per user. */
export interface MergeRecordsState<F> {
  /** Store-wide record ids: 1, 2, 3, ... in order of creation. */
  readonly nextId: number
  readonly byUser: HashMap.HashMap<UserId, MergeRecord<F>>
}

export const emptyMergeRecords = <F>(): MergeRecordsState<F> => ({ nextId: 1, byUser: HashMap.empty() })

/** The user's record and the state that holds it, creating the record with the defaults when there is none. */
const getOrCreateIn = <F>(
  kind: MergeKind<F>,
  state: MergeRecordsState<F>,
  userId: UserId,
  now: Date
): readonly [record: MergeRecord<F>, next: MergeRecordsState<F>] =>
  Option.match(HashMap.get(state.byUser, userId), {
    onSome: (record) => [record, state] as const,
    onNone: () => {
      const record = newMergeRecord(kind, state.nextId, now)
      return [record, { nextId: state.nextId + 1, byUser: HashMap.set(state.byUser, userId, record) }] as const
    }
  })

const refused: Effect.Effect<never, PreconditionFailed> = Effect.fail(new PreconditionFailed())

/**
 * Any kind of merge record in memory. Every write is one `Ref.modify`, so the precondition and the merge see the
 * same record and concurrent writes of one user apply one after the other: none is lost.
 */
export const makeMergeRecordStore = <F>(
  kind: MergeKind<F>,
  state: Ref.Ref<MergeRecordsState<F>>,
  log: MemoryEventLog
): MergeRecordStore<F> => ({
  getOrCreate: (userId, now) => Ref.modify(state, (current) => getOrCreateIn(kind, current, userId, now)),
  update: (userId, merge, precondition) =>
    Effect.flatten(
      Ref.modify(
        state,
        (current): readonly [Effect.Effect<MergeRecord<F>, PreconditionFailed>, MergeRecordsState<F>] => {
          const [record, withRecord] = getOrCreateIn(kind, current, userId, merge.at)
          if (precondition !== undefined && !precondition(record)) return [refused, withRecord]
          const merged = applyMerge(kind, record, merge)
          if (merged === record) return [Effect.succeed(record), withRecord]
          // The change's events, in the same synchronous step as the change.
          log.append(kind.events(userId, record, merged))
          return [Effect.succeed(merged), { ...withRecord, byUser: HashMap.set(withRecord.byUser, userId, merged) }]
        }
      )
    )
})
