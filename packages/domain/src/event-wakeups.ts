import type { UserId } from "./values/ids.js"

/**
 * The in-process half of `EventStore.subscribe`: who waits for an owner's next event, woken once a write that
 * recorded one has committed. A wake-up carries nothing but "read again": the store stays the truth, so one that is
 * lost or merged with another delays a reader, never loses it an event.
 */
export class EventWakeups {
  readonly #waiting = new Map<string, Set<() => void>>()

  /** Calls `wake` after each commit of an event of `owner`, until the returned function is called. */
  subscribe(owner: UserId | string, wake: () => void): () => void {
    let set = this.#waiting.get(owner)
    if (set === undefined) this.#waiting.set(owner, (set = new Set()))
    // A set keeps one entry per subscription even when two pass the same function.
    const entry = (): void => wake()
    set.add(entry)
    return () => {
      set.delete(entry)
      if (set.size === 0 && this.#waiting.get(owner) === set) this.#waiting.delete(owner)
    }
  }

  /** Wakes every subscriber of `owner`, each in a microtask of its own: never inside the write's own step. */
  wake(owner: UserId | string): void {
    const set = this.#waiting.get(owner)
    if (set === undefined) return
    for (const wake of set) void Promise.resolve().then(wake)
  }

  /** Wakes every subscriber (a reconnected notification channel may have missed some). */
  wakeAll(): void {
    for (const set of this.#waiting.values()) for (const wake of set) void Promise.resolve().then(wake)
  }
}
