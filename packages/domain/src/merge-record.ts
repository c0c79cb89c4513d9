import type { Effect } from "effect"
import type { PreconditionFailed, Unavailable } from "./errors.js"
import type { DomainEvent } from "./events.js"
import type { UserId } from "./values/ids.js"
import { notBefore } from "./timestamp.js"

/**
 * The one shape of a record with merge semantics (docs/api.md, "Precise rules"; the preferences are one): one per
 * user, created with defaults on first access, its fields `F` replaced field by field by a write, and the bookkeeping
 * every such record has. A new record of this kind declares its fields (`MergeKind`) and gets the port
 * (`MergeRecordStore`), the semantics (`applyMerge`) and, in each store, the generic implementation.
 */
export type MergeRecord<F> = F & {
  /** Store-wide, 1, 2, 3, ... in order of creation. */
  readonly id: number
  readonly createdAt: Date
  readonly updatedAt: Date
}

/**
 * What a kind of merge record is: its field names (in the order a store keeps them), a new record's values, and the
 * events a write that changed a record records (docs/api.md, "Events"), which every store persists in the write's
 * atomic step; none for a write that changes nothing.
 */
export interface MergeKind<F> {
  readonly fields: ReadonlyArray<keyof F & string>
  readonly defaults: F
  readonly events: (userId: UserId, before: MergeRecord<F>, after: MergeRecord<F>) => ReadonlyArray<DomainEvent>
}

/**
 * A write as the domain states it: the values to set (a field absent is kept), already in the form the record keeps
 * (the domain decided it: a canonical tag, a checked number), and the write's instant. Plain data rather than a
 * function of the current record, so that a SQL store applies it in one statement (`INSERT ... ON CONFLICT DO UPDATE`)
 * with the same meaning as `applyMerge`.
 */
export interface Merge<F> {
  readonly set: Partial<F>
  readonly at: Date
}

/** A record created at `now` with the kind's defaults. */
export const newMergeRecord = <F>(kind: MergeKind<F>, id: number, now: Date): MergeRecord<F> => ({
  ...kind.defaults,
  id,
  createdAt: now,
  updatedAt: now
})

/**
 * The meaning of a merge, which every store keeps (the SQL store in its statement, the memory store by calling this):
 * each value set replaces the field; `updatedAt` moves to the write's instant only when a value really changes (`===`:
 * the fields are strings, numbers and booleans), so a repeated PUT is a no-op, and never backwards (the instant is
 * taken before the store's atomic step, so a write that waited may carry an earlier one: docs/api.md, "Precise
 * rules"). `id` and `createdAt` never change. Returns the same object when nothing changed.
 */
export const applyMerge = <F>(kind: MergeKind<F>, current: MergeRecord<F>, merge: Merge<F>): MergeRecord<F> => {
  const changes = kind.fields.some((field) => {
    const value = merge.set[field]
    return value !== undefined && value !== current[field]
  })
  // `set` holds no key whose value is undefined (exactOptionalPropertyTypes), so the spread keeps what it omits.
  return changes ? { ...current, ...merge.set, updatedAt: notBefore(merge.at, current.updatedAt) } : current
}

/**
 * Two states of a record are the same version when every field and `updatedAt` are equal (id and createdAt never
 * change): what a conditional write compares to know that nothing came between its read and its write.
 */
export const sameVersion = <F>(kind: MergeKind<F>, a: MergeRecord<F>, b: MergeRecord<F>): boolean =>
  a.updatedAt.getTime() === b.updatedAt.getTime() && kind.fields.every((field) => a[field] === b[field])

/** The port of one kind of merge record, one per user. */
export interface MergeRecordStore<F> {
  /** The user's record, created (createdAt = updatedAt = now) when the user has none yet. */
  readonly getOrCreate: (userId: UserId, now: Date) => Effect.Effect<MergeRecord<F>, Unavailable>
  /**
   * Atomically: get-or-create the record (at `merge.at`), then apply `merge` as `applyMerge` does. Concurrent writes
   * of one user, from any process, apply one after the other; none is lost. With `precondition` (an HTTP If-Match):
   * judged on the record as it is just before the write, in the same atomic step; unmet, PreconditionFailed and
   * nothing written (the record may have been created). Returns the stored record. A write that changes no value
   * leaves the version as it was, so several conditional writers that each change nothing all succeed.
   */
  readonly update: (
    userId: UserId,
    merge: Merge<F>,
    precondition?: (current: MergeRecord<F>) => boolean
  ) => Effect.Effect<MergeRecord<F>, PreconditionFailed | Unavailable>
}
