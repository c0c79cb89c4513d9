import { Effect } from "effect"
import {
  type DeliveryStatus,
  type DomainEvent,
  EventStore,
  newEventId,
  ownerOf,
  type PendingEvent,
  type RecordedEvent,
  subjectOf,
  UnknownCursor,
  type UserId
} from "@accord/domain"

interface Entry {
  readonly recorded: RecordedEvent
  status: DeliveryStatus
  attempts: number
  deliveredTo: ReadonlyArray<string>
  /** Epoch milliseconds; 0: due at once. */
  nextAttemptAt: number
  /** Epoch milliseconds until which a deliverer holds it; 0: nobody. */
  heldUntil: number
}

/**
 * A memory store's events. `append` runs inside the write's own `Ref.modify` (a synchronous step), so an event
 * exists exactly when its change does; its structures are mutable, and touched only in such synchronous steps, so
 * no reader sees half of one.
 */
export class MemoryEventLog {
  private readonly entries: Array<Entry> = []
  private readonly positions = new Map<string, number>()
  private readonly sequences = new Map<string, number>()
  private readonly byOwner = new Map<UserId, Array<number>>()
  /** Positions of the pending entries, oldest first (a Set keeps insertion order). */
  private readonly pending = new Set<number>()

  append(events: ReadonlyArray<DomainEvent>): void {
    for (const event of events) {
      const subject = subjectOf(event)
      const sequence = (this.sequences.get(subject) ?? 0) + 1
      this.sequences.set(subject, sequence)
      const position = this.entries.length
      const recorded: RecordedEvent = { id: newEventId(), subject, sequence, event }
      this.entries.push({ recorded, status: "pending", attempts: 0, deliveredTo: [], nextAttemptAt: 0, heldUntil: 0 })
      this.positions.set(recorded.id, position)
      this.pending.add(position)
      const owner = ownerOf(event)
      if (owner !== undefined) {
        const owned = this.byOwner.get(owner)
        if (owned === undefined) this.byOwner.set(owner, [position])
        else owned.push(position)
      }
    }
  }

  /** The positions after the one of `after` in `positions` (ascending), or undefined when `after` is not there. */
  private pageOf(positions: ReadonlyArray<number>, after: string | undefined, limit: number) {
    let start = 0
    if (after !== undefined) {
      const from = this.positions.get(after)
      const index = from === undefined ? -1 : binarySearch(positions, from)
      if (index === -1) return undefined
      start = index + 1
    }
    return positions.slice(start, start + limit).map((position) => this.entries[position]!.recorded)
  }

  listByOwner(owner: UserId, after: string | undefined, limit: number) {
    return this.pageOf(this.byOwner.get(owner) ?? [], after, limit)
  }

  list(after: string | undefined, limit: number) {
    const from = after === undefined ? 0 : this.positions.get(after)
    if (from === undefined) return undefined
    const start = after === undefined ? 0 : from + 1
    return this.entries.slice(start, start + limit).map((entry) => entry.recorded)
  }

  claimDue(now: number, heldUntil: number, limit: number): ReadonlyArray<PendingEvent> {
    const claimed: Array<PendingEvent> = []
    for (const position of this.pending) {
      if (claimed.length === limit) break
      const entry = this.entries[position]!
      if (entry.nextAttemptAt > now || entry.heldUntil > now) continue
      entry.heldUntil = heldUntil
      claimed.push({ recorded: entry.recorded, attempts: entry.attempts, deliveredTo: entry.deliveredTo })
    }
    return claimed
  }

  settle(id: string, status: DeliveryStatus, attempts: number, deliveredTo: ReadonlyArray<string>, next: number) {
    const position = this.positions.get(id)
    if (position === undefined) return
    const entry = this.entries[position]!
    entry.status = status
    entry.attempts = attempts
    entry.deliveredTo = deliveredTo
    entry.nextAttemptAt = next
    entry.heldUntil = 0
    if (status === "pending") this.pending.add(position)
    else this.pending.delete(position)
  }

  replayFailed(now: number): number {
    let replayed = 0
    this.entries.forEach((entry, position) => {
      if (entry.status !== "failed") return
      entry.status = "pending"
      entry.nextAttemptAt = now
      this.pending.add(position)
      replayed++
    })
    // A Set iterates in insertion order: re-sort so the oldest replayed event is tried first.
    const sorted = [...this.pending].sort((a, b) => a - b)
    this.pending.clear()
    for (const position of sorted) this.pending.add(position)
    return replayed
  }

  countByStatus(): Readonly<Record<DeliveryStatus, number>> {
    const counts = { pending: 0, delivered: 0, failed: 0 }
    for (const entry of this.entries) counts[entry.status]++
    return counts
  }
}

const binarySearch = (sorted: ReadonlyArray<number>, value: number): number => {
  let low = 0
  let high = sorted.length - 1
  while (low <= high) {
    const middle = (low + high) >>> 1
    const found = sorted[middle]!
    if (found === value) return middle
    if (found < value) low = middle + 1
    else high = middle - 1
  }
  return -1
}

const unknownCursor = new UnknownCursor()

export const makeEventStore = (log: MemoryEventLog) =>
  EventStore.of({
    listByOwner: (owner, after, limit) =>
      Effect.suspend(() => {
        const page = log.listByOwner(owner, after, limit)
        return page === undefined ? Effect.fail(unknownCursor) : Effect.succeed(page)
      }),
    list: (after, limit) =>
      Effect.suspend(() => {
        const page = log.list(after, limit)
        return page === undefined ? Effect.fail(unknownCursor) : Effect.succeed(page)
      }),
    claimDue: (now, leaseUntil, limit) => Effect.sync(() => log.claimDue(now.getTime(), leaseUntil.getTime(), limit)),
    settle: (id, settlement) =>
      Effect.sync(() =>
        log.settle(
          id,
          settlement.status,
          settlement.attempts,
          settlement.deliveredTo,
          settlement.nextAttemptAt?.getTime() ?? 0
        )
      ),
    replayFailed: (now) => Effect.sync(() => log.replayFailed(now.getTime())),
    countByStatus: Effect.sync(() => log.countByStatus())
  })
