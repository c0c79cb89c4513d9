import type { Principal } from "@accord/domain"
import { Cause, Exit } from "effect"
import type { ErasedStream, StreamedItem } from "./implementation.js"
import type { AccordRuntime, EventStreamOptions, StreamedBody } from "./types.js"

// docs/api.md, "Events": the feed as Server-Sent Events. The store is the truth: a stream reads it after the last id
// it sent, when woken (the store's subscription) and every `rereadMs` besides, so that a lost wake-up delays an event
// and never loses it; one read at a time, so each event is sent once, in order.

export const EVENT_STREAM_TYPE = "text/event-stream"
/** A client's unread bytes past which its connection is closed: thousands of events, more than any catch-up. */
export const DEFAULT_MAX_UNSENT_BYTES = 1024 * 1024
export const DEFAULT_HEARTBEAT_MS = 15_000
export const DEFAULT_STREAMS_PER_CREDENTIAL = 5
export const DEFAULT_STREAMS_TOTAL = 1000
export const DEFAULT_REREAD_MS = 5000
/** How many events one read of the store takes (the replay goes page by page). */
export const STREAM_PAGE = 100
/** The reconnection delay a client is told first (the `retry:` field), in milliseconds. */
export const STREAM_RETRY_MS = 2000

const isUnknownCursor = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "UnknownCursor"

const HEARTBEAT = ": heartbeat\n\n"

/** One event as its block: `id:` its cursor, `data:` its JSON on one line (JSON.stringify writes no line break). */
export const eventBlock = (item: StreamedItem): string => `id: ${item.id}\ndata: ${JSON.stringify(item.item)}\n\n`

/**
 * The open streams, counted per credential and in total, so that a stream past either bound is refused before it
 * starts (429 / 503).
 */
export class StreamCounts {
  readonly #perKey = new Map<string, number>()
  #total = 0
  readonly perCredential: number
  readonly total: number

  constructor(options: EventStreamOptions | undefined) {
    this.perCredential = options?.perCredential ?? DEFAULT_STREAMS_PER_CREDENTIAL
    this.total = options?.total ?? DEFAULT_STREAMS_TOTAL
  }

  /** Why `key` may not open one more: its own bound, the server's, or nothing. */
  refusal(key: string): "credential" | "total" | undefined {
    if ((this.#perKey.get(key) ?? 0) >= this.perCredential) return "credential"
    if (this.#total >= this.total) return "total"
    return undefined
  }

  open(key: string): void {
    this.#perKey.set(key, (this.#perKey.get(key) ?? 0) + 1)
    this.#total++
  }

  close(key: string): void {
    const left = (this.#perKey.get(key) ?? 1) - 1
    if (left <= 0) this.#perKey.delete(key)
    else this.#perKey.set(key, left)
    this.#total--
  }
}

export interface EventStreamSetup {
  readonly runtime: AccordRuntime
  readonly source: ErasedStream
  readonly caller: Principal | undefined
  /** The last id the client has (where the first page started), or undefined: from the first. */
  readonly after: string | undefined
  /** The first page, already read before the head (its read checked the resume point). */
  readonly first: ReadonlyArray<StreamedItem>
  readonly options: EventStreamOptions | undefined
  readonly drainStarted: PromiseLike<void> | undefined
  /** Called once when the stream ends, whichever way. */
  readonly onEnd: () => void
}

/** The stream's body: `retry:`, the replay, then live events and heartbeats until the drain or the client's leaving. */
export const eventStreamBody = (setup: EventStreamSetup): StreamedBody => ({
  maxUnsentBytes: setup.options?.maxUnsentBytes ?? DEFAULT_MAX_UNSENT_BYTES,
  start: (write, end) => {
    const { runtime, source, caller, options } = setup
    const heartbeatMs = options?.heartbeatMs ?? DEFAULT_HEARTBEAT_MS
    const rereadMs = options?.rereadMs ?? DEFAULT_REREAD_MS
    let last = setup.after
    let open = true
    let reading = false
    let again = false
    let unsubscribe: (() => void) | undefined

    const send = (items: ReadonlyArray<StreamedItem>): void => {
      if (items.length === 0) return
      let chunk = ""
      for (const item of items) chunk += eventBlock(item)
      last = items[items.length - 1]?.id ?? last
      write(chunk)
      options?.onEventsSent?.(items.length)
    }

    /** Reads after the last id sent until a page is short; a read asked for meanwhile runs once more after it. */
    const read = (): void => {
      if (!open) return
      if (reading) {
        again = true
        return
      }
      reading = true
      again = false
      runtime.runCallback(source.page(caller, last, STREAM_PAGE), {
        onExit: (exit) => {
          reading = false
          if (!open) return
          // A store that cannot answer now is read again at the next wake-up or period; an unknown cursor (its
          // events pruned) ends the stream, and the client reconnects from where it is.
          if (Exit.isFailure(exit)) {
            if (exit.cause.reasons.some((reason) => Cause.isFailReason(reason) && isUnknownCursor(reason.error)))
              stop(true)
            return
          }
          send(exit.value)
          if (exit.value.length === STREAM_PAGE || again) read()
        }
      })
    }

    const heartbeat = setInterval(() => {
      if (open) write(HEARTBEAT)
    }, heartbeatMs)
    const reread = setInterval(read, rereadMs)

    const stop = (ended: boolean): void => {
      if (!open) return
      open = false
      clearInterval(heartbeat)
      clearInterval(reread)
      unsubscribe?.()
      setup.onEnd()
      if (ended) end()
    }

    write(`retry: ${STREAM_RETRY_MS}\n\n`)
    send(setup.first)
    // Subscribed before the next read: an event recorded after the first page and before the subscription is read
    // by that read, one recorded later wakes it.
    runtime.runCallback(source.subscribe(caller, read), {
      onExit: (exit) => {
        if (Exit.isSuccess(exit)) {
          if (open) unsubscribe = exit.value
          else exit.value()
        }
        read()
      }
    })
    void setup.drainStarted?.then(() => stop(true))
    return () => stop(false)
  }
})
