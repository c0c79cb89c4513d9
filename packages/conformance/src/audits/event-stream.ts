import { equal, fail, isTrue } from "./assert.js"
import { audit, type Audit, type AuditTarget } from "./audit.js"
import { bearer, expectJsonSuccess, expectProblem, putPreferences, record, text } from "./responses.js"

// docs/api.md, "Events": the feed as Server-Sent Events, resumable from Last-Event-ID. Read with the runtime's own
// fetch against the target's URL (a stream is never one buffered answer), so these audits need a real server.

/** A well-formed UUIDv7 no server made: a resume point that names no event. */
const NO_EVENT = "00000000-0000-7000-8000-000000000000"
/** The longest an audit waits for a block it expects (an event after a change, a heartbeat). */
const BLOCK_WAIT_MS = 25_000

/** One SSE block: its `id`, its `data` lines joined, and its comment lines, as the text/event-stream grammar reads them. */
export interface SseBlock {
  readonly id: string | undefined
  readonly data: string | undefined
  readonly retry: string | undefined
  readonly comments: ReadonlyArray<string>
}

/** Parses one block (the lines between two blank lines) of a text/event-stream. */
export const parseSseBlock = (block: string): SseBlock => {
  let id: string | undefined
  let data: string | undefined
  let retry: string | undefined
  const comments: Array<string> = []
  for (const line of block.split(/\r\n|\r|\n/)) {
    if (line.startsWith(":")) {
      comments.push(line.slice(1).trimStart())
      continue
    }
    const colon = line.indexOf(":")
    const field = colon < 0 ? line : line.slice(0, colon)
    let value = colon < 0 ? "" : line.slice(colon + 1)
    if (value.startsWith(" ")) value = value.slice(1)
    if (field === "id") id = value
    else if (field === "data") data = data === undefined ? value : `${data}\n${value}`
    else if (field === "retry") retry = value
  }
  return { id, data, retry, comments }
}

/** An open stream: its answer's head, and its blocks one at a time. */
export interface OpenStream {
  readonly status: number
  readonly headers: Headers
  /** The answer's body when it is not a stream (a problem). */
  readonly body: string | undefined
  /** The next block, or undefined when the stream ended; fails after `waitMs`. */
  readonly next: (waitMs?: number) => Promise<SseBlock | undefined>
  readonly close: () => void
}

/** Opens the events stream of `token` (none: no credential) with `headers` besides Accept. */
export const openEventStream = async (
  t: AuditTarget,
  token: string | undefined,
  headers: Readonly<Record<string, string>> = {},
  query = ""
): Promise<OpenStream> => {
  const controller = new AbortController()
  const response = await fetch(`${t.url.replace(/\/+$/, "")}${t.paths.events.slice(t.prefix.length)}${query}`, {
    headers: { accept: "text/event-stream", ...(token === undefined ? {} : bearer(token)), ...headers },
    signal: controller.signal
  })
  const streamed = response.headers.get("content-type") === "text/event-stream" && response.body !== null
  if (!streamed) {
    const body = await response.text()
    return {
      status: response.status,
      headers: response.headers,
      body,
      next: () => Promise.resolve(undefined),
      close: () => {}
    }
  }
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let buffered = ""
  let ended = false
  const next = async (waitMs = BLOCK_WAIT_MS): Promise<SseBlock | undefined> => {
    const deadline = Date.now() + waitMs
    for (;;) {
      const end = buffered.indexOf("\n\n")
      if (end >= 0) {
        const block = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        return parseSseBlock(block)
      }
      if (ended) return undefined
      const left = deadline - Date.now()
      if (left <= 0) return fail(`no complete block within ${waitMs} ms (have ${JSON.stringify(buffered)})`)
      let timer: ReturnType<typeof setTimeout> | undefined
      const read = await Promise.race([
        reader.read(),
        new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), left)))
      ]).finally(() => clearTimeout(timer))
      if (read === "late") continue
      if (read.done) ended = true
      else buffered += decoder.decode(read.value, { stream: true })
    }
  }
  return {
    status: response.status,
    headers: response.headers,
    body: undefined,
    next,
    close: () => controller.abort()
  }
}

/** The next block that carries an event (heartbeats skipped). */
export const nextEvent = async (stream: OpenStream, label: string): Promise<SseBlock> => {
  for (;;) {
    const block = await stream.next()
    if (block === undefined) return fail(`${label}: the stream ended`)
    if (block.data !== undefined) return block
  }
}

/** The caller's whole feed as the JSON texts of its elements (their ids, and each element's bytes as JSON). */
const feedElements = async (t: AuditTarget, token: string): Promise<ReadonlyArray<{ id: string; json: string }>> => {
  const all: Array<{ id: string; json: string }> = []
  for (let pages = 0; pages < 1000; pages++) {
    const last = all.at(-1)
    const res = await t.send({
      method: "GET",
      path: `${t.paths.events}?limit=100${last === undefined ? "" : `&after=${last.id}`}`,
      headers: bearer(token)
    })
    const body = record("feed page", expectJsonSuccess("feed page", res, 200))
    const data = body["data"]
    if (!Array.isArray(data)) return fail("feed page: data is not an array")
    for (const item of data as ReadonlyArray<unknown>) {
      const id = record("feed item", item)["id"]
      all.push({ id: String(id), json: JSON.stringify(item) })
    }
    if (body["has_more"] !== true) return all
  }
  return fail("more than 1000 pages")
}

const expectStreamHead = (label: string, stream: OpenStream): void => {
  equal(stream.status, 200, `${label}: status (body ${stream.body ?? ""})`)
  equal(stream.headers.get("content-type"), "text/event-stream", `${label}: Content-Type`)
  equal(stream.headers.get("cache-control"), "no-store", `${label}: Cache-Control`)
  equal(stream.headers.get("x-accel-buffering"), "no", `${label}: X-Accel-Buffering`)
  equal(stream.headers.get("etag"), null, `${label}: no ETag`)
  isTrue(stream.headers.get("x-request-id") !== null, `${label}: X-Request-Id`)
}

/** A problem answered before any stream, as fetch got it. */
const expectRefusal = (label: string, stream: OpenStream, status: number, code: string): void => {
  stream.close()
  equal(stream.status, status, `${label}: status`)
  equal(stream.headers.get("content-type"), "application/problem+json; charset=utf-8", `${label}: Content-Type`)
  const body = JSON.parse(stream.body ?? "null") as unknown
  equal(record(label, body)["code"], code, `${label}: code`)
}

export const eventStreamAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-events-stream-replay-live",
    level: "MUST",
    title:
      "Accept: text/event-stream streams the caller's events: retry first, then after Last-Event-ID each event the feed holds (id: its id, data: its element's bytes), then a new change live; never another user's",
    needs: ["raw-http"],
    operations: ["listEvents"],
    timeoutMs: 60_000,
    run: async (t) => {
      const user = t.userToken
      for (const timezone of [15, 30]) await putPreferences(t, user, JSON.stringify({ timezone }))
      const feed = await feedElements(t, user)
      isTrue(feed.length >= 2, "the feed holds at least two events")
      const from = feed.length - 2
      const stream = await openEventStream(t, user, { "last-event-id": feed[from]?.id ?? "" })
      try {
        expectStreamHead("stream", stream)
        const first = await stream.next()
        equal(first?.retry, "2000", "the first block is retry: 2000")
        const replayed = await nextEvent(stream, "replay")
        equal(replayed.id, feed[from + 1]?.id, "the replay starts after Last-Event-ID")
        equal(replayed.data, feed[from + 1]?.json, "its data is the feed's element, byte for byte")
        // Another user's change, then the caller's: the next event is the caller's.
        await putPreferences(t, t.otherUserToken, JSON.stringify({ timezone: 45 }))
        await putPreferences(t, user, JSON.stringify({ timezone: 60 }))
        const live = await nextEvent(stream, "live")
        const after = await feedElements(t, user)
        equal(live.id, after.at(-1)?.id, "the live event is the caller's new one")
        equal(live.data, after.at(-1)?.json, "its data is the feed's element, byte for byte")
        await putPreferences(t, t.otherUserToken, JSON.stringify({ timezone: 0 }))
      } finally {
        stream.close()
      }
      // `after` is the resume point when no Last-Event-ID is sent.
      const byQuery = await openEventStream(t, user, {}, `?after=${feed[from]?.id ?? ""}`)
      try {
        expectStreamHead("stream with after", byQuery)
        await byQuery.next()
        equal((await nextEvent(byQuery, "after")).id, feed[from + 1]?.id, "after: the replay starts after it")
      } finally {
        byQuery.close()
      }
    }
  }),

  audit({
    id: "ACC-events-stream-heartbeat",
    level: "MUST",
    title: "an idle stream sends a `: heartbeat` comment (every 15 s by default)",
    needs: ["raw-http"],
    operations: ["listEvents"],
    timeoutMs: 60_000,
    run: async (t) => {
      const feed = await feedElements(t, t.userToken)
      const stream = await openEventStream(
        t,
        t.userToken,
        feed.length === 0 ? {} : { "last-event-id": feed.at(-1)?.id ?? "" }
      )
      try {
        expectStreamHead("stream", stream)
        for (;;) {
          const block = await stream.next(BLOCK_WAIT_MS)
          if (block === undefined) return fail("the stream ended")
          if (block.comments.includes("heartbeat")) return
        }
      } finally {
        stream.close()
      }
    }
  }),

  audit({
    id: "ACC-events-stream-refusals",
    level: "MUST",
    title:
      "a stream is refused with a problem before it starts: 401 without a credential, 403 for an application's, 406 for an Accept of neither JSON nor event-stream, 400 for a Last-Event-ID that is not an id (invalid_query) or not the caller's (invalid_cursor)",
    needs: ["raw-http"],
    operations: ["listEvents"],
    run: async (t) => {
      expectRefusal("no credential", await openEventStream(t, undefined), 401, "unauthenticated")
      expectRefusal("an application's credential", await openEventStream(t, t.clientToken), 403, "insufficient_scope")
      expectRefusal(
        "Accept: text/html",
        await openEventStream(t, t.userToken, { accept: "text/html" }),
        406,
        "not_acceptable"
      )
      expectRefusal(
        "Last-Event-ID not an id",
        await openEventStream(t, t.userToken, { "last-event-id": "not-an-id" }),
        400,
        "invalid_query"
      )
      expectRefusal(
        "Last-Event-ID of no event",
        await openEventStream(t, t.userToken, { "last-event-id": NO_EVENT }),
        400,
        "invalid_cursor"
      )
      // Without text/event-stream the feed answers JSON, as it always did.
      const json = await t.send({
        method: "GET",
        path: t.paths.events,
        headers: { ...bearer(t.userToken), accept: "application/json" }
      })
      expectJsonSuccess("Accept: application/json", json, 200)
      isTrue(text(json).startsWith('{"data":'), "Accept: application/json: the feed's page")
      expectProblem(
        "Accept: text/html on the JSON feed",
        await t.send({ method: "GET", path: t.paths.events, headers: { ...bearer(t.userToken), accept: "text/html" } }),
        { code: "not_acceptable" }
      )
    }
  }),

  audit({
    id: "ACC-events-stream-limit",
    level: "MUST",
    title: "past the streams one credential may hold, 429 too_many_streams with Retry-After, before any stream starts",
    needs: ["raw-http"],
    operations: ["listEvents"],
    run: async (t) => {
      const open: Array<OpenStream> = []
      try {
        for (let count = 0; count < 100; count++) {
          const stream = await openEventStream(t, t.otherUserToken)
          if (stream.status === 200) {
            open.push(stream)
            continue
          }
          expectRefusal(`stream ${count + 1}`, stream, 429, "too_many_streams")
          isTrue(stream.headers.get("retry-after") !== null, "429: Retry-After")
          isTrue(open.length >= 1, "at least one stream is allowed")
          return
        }
        return fail("100 streams of one credential were all allowed")
      } finally {
        for (const stream of open) stream.close()
      }
    }
  })
]
