// @accord/client/events-stream: follows the caller's events as they happen (docs/api.md, "Events": the feed's
// `text/event-stream` answer), typed by @accord/contract's events and decoded with its Schema, resuming by itself.
// An entry of its own, so that the default client's bundle carries neither it nor effect's Schema (README,
// "Following the events"). `fetch` streaming rather than EventSource, which cannot send an Authorization header.
import { AccordEvent, EVENT_TYPES, type ProblemCode } from "@accord/contract"
import { Result, Schema } from "effect"
import { EventStreamParser, EventStreamTooLarge } from "./sse.js"
import type { FetchLike, TokenSource } from "./types.js"

export type { AccordEvent, EventType } from "@accord/contract"
export {
  DEFAULT_MAX_EVENT_LENGTH,
  EventStreamParser,
  EventStreamTooLarge,
  type EventStreamItem,
  type ServerSentEvent
} from "./sse.js"

/** Why following stopped for good: nothing more comes from this follower. */
export type EventStreamFailure =
  /**
   * The server refused the request with a status a retry does not change (400 `invalid_cursor`, 401, 403, 406, any
   * other 4xx but 408 and 429); `status` and, when the answer was problem+json, `problem` and `code` say which.
   */
  | "refused"
  /** A 200 that is not `text/event-stream`: a server without the stream (it answered the JSON feed), or no Accord API. */
  | "not_a_stream"
  /** An event whose data is not JSON, or not an event of one of the contract's types as its Schema decodes it. */
  | "undecodable"
  /** A line or an event longer than `maxEventLength`. */
  | "too_large"
  /** The `token` or `headers` function threw or rejected. */
  | "token"

/** A problem+json body as the server sent it: its `code` one the contract names, or a newer server's. */
export interface StreamProblem {
  readonly type: string
  readonly title: string
  readonly status: number
  readonly detail: string
  readonly code: ProblemCode | (string & {})
}

/** What ends a follower with an error (tagged for `Effect.catchTag`, a plain `Error` otherwise). */
export class EventStreamError extends Error {
  readonly _tag = "EventStreamError"
  override readonly name = "EventStreamError"
  readonly reason: EventStreamFailure
  /** The HTTP status, when an answer arrived. */
  readonly status?: number
  /** The problem's code, when the answer was problem+json (`unauthenticated`, `insufficient_scope`, ...). */
  readonly code?: ProblemCode | (string & {})
  readonly problem?: StreamProblem

  constructor(fields: {
    readonly reason: EventStreamFailure
    readonly message: string
    readonly status?: number
    readonly problem?: StreamProblem
    readonly cause?: unknown
  }) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause })
    this.reason = fields.reason
    if (fields.status !== undefined) this.status = fields.status
    if (fields.problem !== undefined) {
      this.problem = fields.problem
      this.code = fields.problem.code
    }
  }
}

/** Request headers as `new Headers(...)` takes them (the DOM's `HeadersInit`, named here for runtimes without it). */
export type RequestHeaders = ConstructorParameters<typeof Headers>[0]

/** Where a follower is: told to `onState` as it moves, for a page's "live" badge or a test. */
export type FollowState =
  /** A request is on its way. */
  | { readonly state: "connecting"; readonly lastEventId: string | undefined }
  /** The server answered 200 `text/event-stream`: events flow. */
  | { readonly state: "open" }
  /**
   * Waiting `delay` milliseconds before connecting again: after the stream ended or broke (`retry`: the server's
   * `retry` time), after a 429 or 503 (`retry-after`: its `Retry-After`), or after a failed attempt (`backoff`).
   */
  | {
      readonly state: "waiting"
      readonly delay: number
      readonly why: "retry" | "retry-after" | "backoff"
      readonly status?: number
    }

export interface FollowEventsOptions {
  /** The API's base URL including the mount prefix, e.g. `https://api.example.com/api` (as `makeAccordClient`'s). */
  readonly baseUrl: string
  /** Sent as `Authorization: Bearer <token>`; a function is asked before each connection (a refreshed token). */
  readonly token?: TokenSource
  /** More request headers (or a function asked before each connection): a proxy's, a trace's. */
  readonly headers?: RequestHeaders | (() => RequestHeaders | PromiseLike<RequestHeaders>)
  /** Resume after this event id (an event's `id`, as a previous follower's `lastEventId`). Absent: from the first. */
  readonly lastEventId?: string
  /** Aborting it ends the iteration (the loop after `for await` goes on) and closes the connection. */
  readonly signal?: AbortSignal
  /** Default: the global `fetch`. Any function of a `Request` whose answer's body can be read as it arrives. */
  readonly fetch?: FetchLike
  /** The reconnection time until the server sends its own `retry`, in milliseconds. Default 2000. */
  readonly retryDelay?: number
  /** The longest wait between failed attempts (each doubles it, from the reconnection time). Default 30000. */
  readonly maxRetryDelay?: number
  /**
   * Milliseconds without a byte of the stream (the server sends a heartbeat every 15 s) after which the connection is
   * taken for dead and made again. Default 45000.
   */
  readonly idleTimeout?: number
  /** The longest line or event data held, in characters. Default 1 MiB (`DEFAULT_MAX_EVENT_LENGTH`). */
  readonly maxEventLength?: number
  /** Told each change of state. */
  readonly onState?: (state: FollowState) => void
  /**
   * How a delay is waited: resolves after `milliseconds` or as soon as `signal` aborts. Default `setTimeout`; a test
   * may record the delays asked for and wait less.
   */
  readonly wait?: (milliseconds: number, signal: AbortSignal) => Promise<void>
}

/** The caller's events, oldest first, live; iterate it once. */
export interface EventFollower extends AsyncIterable<AccordEvent> {
  /** The id the follower resumes after: the last event's it handed over (or read and skipped), else the option's. */
  readonly lastEventId: string | undefined
}

const decodeEvent = Schema.decodeUnknownResult(AccordEvent)
const KNOWN_TYPES: ReadonlySet<unknown> = new Set(EVENT_TYPES)

const mediaTypeOf = (contentType: string | null): string | undefined => contentType?.split(";")[0]?.trim().toLowerCase()

const defaultWait = (milliseconds: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve()
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener("abort", done)
      resolve()
    }
    const timer = setTimeout(done, milliseconds)
    signal.addEventListener("abort", done)
  })

/** `Retry-After` in milliseconds: delay-seconds or an HTTP date (RFC 9110, 10.2.3); undefined when absent or unreadable. */
export const retryAfterMilliseconds = (value: string | null, now: number = Date.now()): number | undefined => {
  if (value === null) return undefined
  const text = value.trim()
  if (/^[0-9]+$/.test(text)) return Number(text) * 1000
  // An HTTP date names its month in letters; Date.parse alone would take "-1" for a year.
  const date = /^[A-Za-z]{3}/.test(text) ? Date.parse(text) : Number.NaN
  return Number.isNaN(date) ? undefined : Math.max(0, date - now)
}

/** A problem+json body's members, whatever its code (a newer server's too). */
const problemOf = async (response: Response): Promise<StreamProblem | undefined> => {
  if (mediaTypeOf(response.headers.get("content-type")) !== "application/problem+json") {
    await response.body?.cancel().catch(() => undefined)
    return undefined
  }
  try {
    const body: unknown = JSON.parse(await response.text())
    if (typeof body !== "object" || body === null) return undefined
    const { type, title, status, detail, code } = body as Record<string, unknown>
    return typeof type === "string" &&
      typeof title === "string" &&
      Number.isInteger(status) &&
      typeof detail === "string" &&
      typeof code === "string"
      ? { type, title, status: status as number, detail, code }
      : undefined
  } catch {
    return undefined
  }
}

/** How long to wait after the `failures`-th failed attempt in a row: doubling from `base`, at most `max`, jittered. */
const backoff = (failures: number, base: number, max: number): number => {
  const ceiling = Math.min(max, base * 2 ** Math.min(failures - 1, 20))
  // Half fixed, half random: clients refused together do not come back together.
  return Math.round(ceiling / 2 + (Math.random() * ceiling) / 2)
}

/** The data of an event, as one of the contract's events; undefined for an event type this contract does not know. */
const eventOf = (data: string, id: string): AccordEvent | undefined => {
  let json: unknown
  try {
    json = JSON.parse(data)
  } catch (cause) {
    throw new EventStreamError({ reason: "undecodable", message: `The event ${id} is not JSON.`, cause })
  }
  // A newer server's event type: skipped, so that a follower keeps working when the API gains one.
  const type = typeof json === "object" && json !== null ? (json as { type?: unknown }).type : undefined
  if (typeof type === "string" && !KNOWN_TYPES.has(type)) return undefined
  const decoded = decodeEvent(json)
  if (Result.isFailure(decoded))
    throw new EventStreamError({
      reason: "undecodable",
      message: `The event ${id} is not one of the contract's: ${decoded.failure.message}`,
      cause: decoded.failure
    })
  return decoded.success
}

/**
 * Follows the caller's events: `GET {baseUrl}/users/v1/events/` with `Accept: text/event-stream`, each event decoded
 * with the contract's `AccordEvent` Schema and handed over in order. When the stream ends or breaks it connects again
 * with `Last-Event-ID` (after the server's `retry` time), and gets what it missed, exactly once. A failed attempt is
 * tried again later and later (a network error, a 5xx, a 408; a 429 or 503 after its `Retry-After`); a refusal a
 * retry cannot change (400, 401, 403, 406, ...) and an undecodable event end it with an `EventStreamError`. Aborting
 * `signal`, or leaving the loop, closes the connection.
 */
export const followEvents = (options: FollowEventsOptions): EventFollower => {
  let lastEventId = options.lastEventId
  let started = false
  return {
    get lastEventId() {
      return lastEventId
    },
    [Symbol.asyncIterator]() {
      if (started) throw new TypeError("followEvents: iterate a follower once; make another to follow again")
      started = true
      return follow(
        options,
        (id) => (lastEventId = id),
        () => lastEventId
      )
    }
  }
}

async function* follow(
  options: FollowEventsOptions,
  setLastEventId: (id: string | undefined) => void,
  getLastEventId: () => string | undefined
): AsyncGenerator<AccordEvent, void, undefined> {
  const url = `${options.baseUrl.replace(/\/+$/, "")}/users/v1/events/`
  const doFetch = options.fetch ?? ((request: Request) => globalThis.fetch(request))
  const wait = options.wait ?? defaultWait
  const maxDelay = options.maxRetryDelay ?? 30_000
  const idleTimeout = options.idleTimeout ?? 45_000
  const onState = options.onState ?? (() => undefined)
  // Ours, aborted by the caller's signal and when the loop is left: it cancels a fetch, a read and a wait alike.
  const stop = new AbortController()
  const abortStop = () => stop.abort(options.signal?.reason)
  if (options.signal?.aborted === true) return
  options.signal?.addEventListener("abort", abortStop)
  let reconnectionTime = options.retryDelay ?? 2000
  let failures = 0
  try {
    while (!stop.signal.aborted) {
      let headers: Headers
      try {
        headers = new Headers(typeof options.headers === "function" ? await options.headers() : options.headers)
        const token = typeof options.token === "function" ? await options.token() : options.token
        if (token !== undefined) headers.set("authorization", `Bearer ${token}`)
      } catch (cause) {
        throw new EventStreamError({ reason: "token", message: "The token or headers function failed.", cause })
      }
      headers.set("accept", "text/event-stream")
      const resumeAfter = getLastEventId()
      if (resumeAfter !== undefined && resumeAfter !== "") headers.set("last-event-id", resumeAfter)
      onState({ state: "connecting", lastEventId: resumeAfter })
      // One controller per connection: the idle timer aborts this one, the caller's signal all of them.
      const connection = new AbortController()
      const abortConnection = () => connection.abort()
      stop.signal.addEventListener("abort", abortConnection)
      try {
        let response: Response
        try {
          response = await doFetch(new Request(url, { headers, signal: connection.signal }))
        } catch {
          if (stop.signal.aborted) return
          failures += 1
          const delay = backoff(failures, reconnectionTime, maxDelay)
          onState({ state: "waiting", delay, why: "backoff" })
          await wait(delay, stop.signal)
          continue
        }
        if (response.status !== 200) {
          const { status } = response
          const problem = await problemOf(response)
          if (status === 429 || status === 503 || status === 408 || status >= 500) {
            failures += 1
            const asked =
              status === 429 || status === 503 ? retryAfterMilliseconds(response.headers.get("retry-after")) : undefined
            const delay = asked ?? backoff(failures, reconnectionTime, maxDelay)
            onState({ state: "waiting", delay, why: asked === undefined ? "backoff" : "retry-after", status })
            await wait(delay, stop.signal)
            continue
          }
          throw new EventStreamError({
            reason: "refused",
            message: `${status} ${problem === undefined ? "" : `${problem.code}: ${problem.detail}`}`.trim(),
            status,
            ...(problem !== undefined && { problem })
          })
        }
        const contentType = response.headers.get("content-type")
        if (mediaTypeOf(contentType) !== "text/event-stream" || response.body === null) {
          await response.body?.cancel().catch(() => undefined)
          throw new EventStreamError({
            reason: "not_a_stream",
            message: `The server answered 200 ${contentType ?? "without a Content-Type"}, not text/event-stream.`,
            status: 200
          })
        }
        failures = 0
        onState({ state: "open" })
        const parser = new EventStreamParser(
          options.maxEventLength === undefined ? {} : { maxEventLength: options.maxEventLength }
        )
        const reader = response.body.getReader()
        try {
          for (;;) {
            // Only the wait for bytes is timed: a slow consumer of the events is not a dead connection.
            const timer = setTimeout(abortConnection, idleTimeout)
            let chunk: Awaited<ReturnType<typeof reader.read>>
            try {
              chunk = await reader.read()
            } catch {
              break // dropped, idle or aborted: connect again below unless stopped
            } finally {
              clearTimeout(timer)
            }
            let items
            try {
              items = chunk.done ? parser.end() : parser.push(chunk.value)
            } catch (cause) {
              if (cause instanceof EventStreamTooLarge)
                throw new EventStreamError({ reason: "too_large", message: cause.message, status: 200, cause })
              throw cause
            }
            for (const item of items) {
              if (item.kind === "retry") reconnectionTime = item.milliseconds
              else if (item.kind === "empty") setLastEventId(item.lastEventId)
              else if (item.kind === "event") {
                const { type, data, lastEventId } = item.event
                // Accord sends no `event` field: another type is no event of its, skipped as EventSource would.
                const event = type === "message" ? eventOf(data, lastEventId) : undefined
                setLastEventId(lastEventId)
                if (event !== undefined) yield event
                if (stop.signal.aborted) return
              }
            }
            if (chunk.done) break
          }
        } finally {
          await reader.cancel().catch(() => undefined)
        }
      } finally {
        stop.signal.removeEventListener("abort", abortConnection)
      }
      if (stop.signal.aborted) return
      onState({ state: "waiting", delay: reconnectionTime, why: "retry" })
      await wait(reconnectionTime, stop.signal)
    }
  } finally {
    options.signal?.removeEventListener("abort", abortStop)
    stop.abort()
  }
}
