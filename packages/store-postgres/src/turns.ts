import { Effect, Option, Semaphore } from "effect"
import { Unavailable } from "@accord/domain"

/**
 * One record's turn in this process, and what the last write in it left (`last`): kept while writers of the record
 * queue here, dropped with the turn when none is left.
 */
export interface Turn<A> {
  last: A | undefined
}

interface Entry {
  readonly semaphore: Semaphore.Semaphore
  /** The writers holding or waiting for the turn: the entry goes when it falls to 0. */
  users: number
  last: unknown
}

/** A write that could not get its record's turn within the wait: the store is busy with that record (503). */
export const storeBusy = (waitMs: number): Unavailable =>
  new Unavailable({
    reason: "store_busy",
    retryAfterSeconds: 1,
    cause: new Error(`no turn for the record within ${waitMs} ms`)
  })

/**
 * Per-record turns within a process (docs/operations.md, "Writes under contention"): the writers of one record queue
 * here, first come first served, so that one at a time races the database for it. The database queues writers on a
 * row too, but each of them would hold a pool connection while it waits and, with a compare-and-set, lose and try
 * again; here a waiting writer holds nothing. A writer that does not get its turn within `waitMs` fails
 * Unavailable(store_busy) and never hangs; writers of different records never wait for each other.
 */
export const makeTurns = (waitMs: number) => {
  const entries = new Map<string, Entry>()
  const enter = (key: string): Entry => {
    let entry = entries.get(key)
    if (entry === undefined) {
      entry = { semaphore: Semaphore.makeUnsafe(1), users: 0, last: undefined }
      entries.set(key, entry)
    }
    entry.users += 1
    return entry
  }
  const leave = (key: string, entry: Entry): void => {
    entry.users -= 1
    if (entry.users === 0 && entries.get(key) === entry) entries.delete(key)
  }
  return {
    /** `body` in the record's turn; `A` is what the record's writers leave each other (one type per key's kind). */
    run: <A, B, E, R>(
      key: string,
      body: (turn: Turn<A>) => Effect.Effect<B, E, R>
    ): Effect.Effect<B, E | Unavailable, R> =>
      Effect.uninterruptibleMask((restore) => {
        const entry = enter(key)
        return restore(Effect.timeoutOption(entry.semaphore.take(1), waitMs)).pipe(
          Effect.flatMap((taken): Effect.Effect<B, E | Unavailable, R> =>
            Option.isNone(taken)
              ? Effect.fail(storeBusy(waitMs))
              : restore(body(entry as Entry & Turn<A>)).pipe(Effect.ensuring(entry.semaphore.release(1)))
          ),
          Effect.ensuring(Effect.sync(() => leave(key, entry)))
        )
      }),
    /** How many records have writers in or waiting for their turn (for tests). */
    get size() {
      return entries.size
    }
  }
}

export type Turns = ReturnType<typeof makeTurns>
