import { Effect } from "effect"
import {
  type DeliveryStatus,
  type DomainEvent,
  EventStore,
  EventWakeups,
  newEventId,
  ownerOf,
  type PendingDelivery,
  type RecordedEvent,
  type SinkBacklog,
  subjectOf,
  UnknownCursor,
  type UserId
} from "@accord/domain"

/** One event's delivery to one sink. */
interface Delivery {
  status: DeliveryStatus
  attempts: number
  /** Epoch milliseconds: where its give-up clock starts. */
  since: number
  /** Epoch milliseconds: when it is due (its next attempt, or the end of a deliverer's claim); 0: due at once. */
  dueAt: number
}

interface Entry {
  readonly recorded: RecordedEvent
  status: DeliveryStatus
  /** Each sink's delivery, once dispatched; undefined before. */
  deliveries: Map<string, Delivery> | undefined
}

/**
 * A memory store's events. `append` runs inside the write's own `Ref.modify` (a synchronous step), so an event
 * exists exactly when its change does; its structures are mutable, and touched only in such synchronous steps, so
 * no reader sees half of one. Each sink's deliveries have their own progress (docs/operations.md, "Events").
 */
export class MemoryEventLog {
  private readonly entries: Array<Entry> = []
  /**
   * An id's position, only if ids ever came out of order (`newEventId` makes them ascending in a process, so the
   * entries are sorted by id and a binary search finds one): a Map of every id cost about 1 us a write on a log of
   * 100k events, its string hashing and its growth (issue 37).
   */
  private positions: Map<string, number> | undefined
  private readonly sequences = new Map<string, number>()
  private readonly byOwner = new Map<UserId, Array<number>>()
  /**
   * The position of the oldest event not dispatched yet: every later one is undispatched too (dispatch takes them
   * oldest first), so one number stands for them.
   */
  private nextUndispatched = 0
  /** Each sink's pending deliveries, by their event's position, oldest first. */
  private readonly pendingBySink = new Map<string, Set<number>>()
  /** Each sink's failed deliveries, counted. */
  private readonly failedBySink = new Map<string, number>()
  private readonly counts: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, failed: 0 }
  /** The live streams waiting for an owner's next event (`EventStore.subscribe`). */
  readonly wakeups = new EventWakeups()

  append(events: ReadonlyArray<DomainEvent>): void {
    for (const event of events) {
      const subject = subjectOf(event)
      const sequence = (this.sequences.get(subject) ?? 0) + 1
      this.sequences.set(subject, sequence)
      const position = this.entries.length
      const recorded: RecordedEvent = { id: newEventId(), subject, sequence, event }
      if (this.positions !== undefined) this.positions.set(recorded.id, position)
      else if (position > 0 && recorded.id <= this.entries[position - 1]!.recorded.id) this.indexPositions(recorded.id)
      this.entries.push({ recorded, status: "pending", deliveries: undefined })
      this.counts.pending++
      const owner = ownerOf(event)
      if (owner !== undefined) {
        const owned = this.byOwner.get(owner)
        if (owned === undefined) this.byOwner.set(owner, [position])
        else owned.push(position)
        // In a microtask: the write's step has ended by then, so a woken reader sees the event.
        this.wakeups.wake(owner)
      }
    }
  }

  /** From an id out of order on: every id's position in a Map (never expected: `newEventId` ascends). */
  private indexPositions(next: string): void {
    const positions = new Map<string, number>()
    this.entries.forEach((entry, position) => positions.set(entry.recorded.id, position))
    positions.set(next, this.entries.length)
    this.positions = positions
  }

  /** An event's position by its id, or undefined. */
  private positionOf(id: string): number | undefined {
    if (this.positions !== undefined) return this.positions.get(id)
    let low = 0
    let high = this.entries.length - 1
    while (low <= high) {
      const middle = (low + high) >>> 1
      const found = this.entries[middle]!.recorded.id
      if (found === id) return middle
      if (found < id) low = middle + 1
      else high = middle - 1
    }
    return undefined
  }

  /** The positions after the one of `after` in `positions` (ascending), or undefined when `after` is not there. */
  private pageOf(positions: ReadonlyArray<number>, after: string | undefined, limit: number) {
    let start = 0
    if (after !== undefined) {
      const from = this.positionOf(after)
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
    const from = after === undefined ? 0 : this.positionOf(after)
    if (from === undefined) return undefined
    const start = after === undefined ? 0 : from + 1
    return this.entries.slice(start, start + limit).map((entry) => entry.recorded)
  }

  private pendingOf(sink: string): Set<number> {
    let pending = this.pendingBySink.get(sink)
    if (pending === undefined) {
      pending = new Set()
      this.pendingBySink.set(sink, pending)
    }
    return pending
  }

  private setStatus(entry: Entry, status: DeliveryStatus): void {
    this.counts[entry.status]--
    this.counts[status]++
    entry.status = status
  }

  dispatch(sinks: ReadonlyArray<string>, limit: number): number {
    let dispatched = 0
    for (; this.nextUndispatched < this.entries.length; this.nextUndispatched++) {
      if (dispatched === limit) break
      const position = this.nextUndispatched
      dispatched++
      const entry = this.entries[position]!
      const since = entry.recorded.event.at.getTime()
      entry.deliveries = new Map(sinks.map((sink) => [sink, { status: "pending", attempts: 0, since, dueAt: 0 }]))
      for (const sink of sinks) this.pendingOf(sink).add(position)
      if (sinks.length === 0) this.setStatus(entry, "delivered")
    }
    return dispatched
  }

  retarget(sinks: ReadonlyArray<string>): number {
    const moved = new Set<number>()
    for (const [sink, pending] of this.pendingBySink) {
      if (sinks.includes(sink)) continue
      for (const position of pending) {
        const entry = this.entries[position]!
        const orphan = entry.deliveries?.get(sink)
        if (entry.deliveries === undefined || orphan === undefined) continue
        entry.deliveries.delete(sink)
        for (const kept of sinks) {
          if (entry.deliveries.has(kept)) continue
          entry.deliveries.set(kept, { status: "pending", attempts: 0, since: orphan.since, dueAt: 0 })
          this.pendingOf(kept).add(position)
        }
        this.setStatus(entry, statusOf(entry.deliveries))
        moved.add(position)
      }
      this.pendingBySink.delete(sink)
    }
    // Added at the end of a sink's Set: re-sorted so that its oldest event is tried first.
    for (const sink of sinks) this.sortPending(sink)
    return moved.size
  }

  claimDue(sink: string, now: number, heldUntil: number, limit: number): ReadonlyArray<PendingDelivery> {
    const claimed: Array<PendingDelivery> = []
    for (const position of this.pendingBySink.get(sink) ?? []) {
      if (claimed.length === limit) break
      const entry = this.entries[position]!
      const delivery = entry.deliveries?.get(sink)
      if (delivery === undefined || delivery.dueAt > now) continue
      delivery.dueAt = heldUntil
      claimed.push({ recorded: entry.recorded, sink, attempts: delivery.attempts, since: new Date(delivery.since) })
    }
    return claimed
  }

  settle(id: string, sink: string, status: DeliveryStatus, attempts: number, next: number): void {
    const position = this.positionOf(id)
    if (position === undefined) return
    const entry = this.entries[position]!
    const delivery = entry.deliveries?.get(sink)
    if (delivery?.status !== "pending") return
    delivery.status = status
    delivery.attempts = attempts
    delivery.dueAt = next
    if (status !== "pending") this.pendingBySink.get(sink)?.delete(position)
    if (status === "failed") this.failedBySink.set(sink, (this.failedBySink.get(sink) ?? 0) + 1)
    this.setStatus(entry, statusOf(entry.deliveries))
  }

  replayFailed(now: number): number {
    let replayed = 0
    const touched = new Set<string>()
    this.entries.forEach((entry, position) => {
      if (entry.status !== "failed") return
      for (const [sink, delivery] of entry.deliveries ?? []) {
        if (delivery.status !== "failed") continue
        Object.assign(delivery, { status: "pending", attempts: 0, since: now, dueAt: now })
        this.failedBySink.set(sink, (this.failedBySink.get(sink) ?? 1) - 1)
        this.pendingOf(sink).add(position)
        touched.add(sink)
      }
      this.setStatus(entry, "pending")
      replayed++
    })
    for (const sink of touched) this.sortPending(sink)
    return replayed
  }

  /** A Set iterates in insertion order: re-sorted so that the sink's oldest event is tried first. */
  private sortPending(sink: string): void {
    const pending = this.pendingOf(sink)
    const sorted = [...pending].sort((a, b) => a - b)
    pending.clear()
    for (const position of sorted) pending.add(position)
  }

  countByStatus(): Readonly<Record<DeliveryStatus, number>> {
    return { ...this.counts }
  }

  countBySink(): ReadonlyArray<SinkBacklog> {
    const sinks = new Set([...this.pendingBySink.keys(), ...this.failedBySink.keys()])
    return [...sinks]
      .sort()
      .map((sink) => ({
        sink,
        pending: this.pendingBySink.get(sink)?.size ?? 0,
        failed: this.failedBySink.get(sink) ?? 0
      }))
      .filter((backlog) => backlog.pending > 0 || backlog.failed > 0)
  }
}

/** An event's status from its deliveries': pending while one is, else failed when one was given up, else delivered. */
const statusOf = (deliveries: ReadonlyMap<string, Delivery> | undefined): DeliveryStatus => {
  const all = [...(deliveries?.values() ?? [])]
  return all.some((each) => each.status === "pending")
    ? "pending"
    : all.some((each) => each.status === "failed")
      ? "failed"
      : "delivered"
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
    subscribe: (owner, wake) => Effect.sync(() => log.wakeups.subscribe(owner, wake)),
    list: (after, limit) =>
      Effect.suspend(() => {
        const page = log.list(after, limit)
        return page === undefined ? Effect.fail(unknownCursor) : Effect.succeed(page)
      }),
    dispatch: (sinks, limit) => Effect.sync(() => log.dispatch(sinks, limit)),
    retarget: (sinks) => Effect.sync(() => log.retarget(sinks)),
    claimDue: (sink, now, leaseUntil, limit) =>
      Effect.sync(() => log.claimDue(sink, now.getTime(), leaseUntil.getTime(), limit)),
    settle: (eventId, sink, settlement) =>
      Effect.sync(() =>
        log.settle(eventId, sink, settlement.status, settlement.attempts, settlement.nextAttemptAt?.getTime() ?? 0)
      ),
    replayFailed: (now) => Effect.sync(() => log.replayFailed(now.getTime())),
    countByStatus: Effect.sync(() => log.countByStatus()),
    countBySink: Effect.sync(() => log.countBySink()),
    // Nothing outlives the process here: the feed keeps every event until it stops.
    pruneDelivered: () => Effect.succeed(0)
  })
