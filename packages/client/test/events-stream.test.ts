import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "@effect/vitest"
import {
  type AccordEvent,
  EventStreamError,
  followEvents,
  type FollowEventsOptions,
  type FollowState,
  retryAfterMilliseconds
} from "@accord/client/events-stream"

// The follower against a small node:http server that speaks the stream's wire format (docs/api.md, "Events"), each
// connection scripted by the test: drops, clean ends, refusals, and what the follower sends back. Every wait the
// follower asks for is recorded and taken at once: the tests judge the delays asked for, never a duration.

/** The n-th event of user u_1, as the feed and the stream carry it. */
const envelope = (n: number): AccordEvent => ({
  specversion: "1.0",
  id: `019a4f6e-0000-7000-8000-${String(n).padStart(12, "0")}`,
  source: "/api",
  type: "preferences.updated",
  time: "2026-11-21T10:05:00.000Z",
  subject: "users/u_1",
  sequence: n,
  datacontenttype: "application/json",
  data: { changes: { timezone: { old: (n - 1) * 15, new: n * 15 } } }
})

const EVENTS = Array.from({ length: 10 }, (_, index) => envelope(index + 1))

const sse = (event: AccordEvent) => `id: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`

/** What one request carried. */
interface Seen {
  readonly lastEventId: string | undefined
  readonly authorization: string | undefined
  readonly accept: string | undefined
}

interface Script {
  /** Answers the `index`-th request (0 first). */
  readonly answer: (index: number, request: IncomingMessage, response: ServerResponse) => void
}

const servers: Array<Server> = []

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

const serve = async (script: Script) => {
  const seen: Array<Seen> = []
  /** Resolves when the n-th request's response closes (the client went away or the server ended it). */
  const closed: Array<Promise<void>> = []
  const server = createServer((request, response) => {
    const header = (name: string) => {
      const value = request.headers[name]
      return typeof value === "string" ? value : undefined
    }
    seen.push({
      lastEventId: header("last-event-id"),
      authorization: header("authorization"),
      accept: header("accept")
    })
    closed.push(new Promise((resolve) => response.on("close", () => resolve())))
    script.answer(seen.length - 1, request, response)
  })
  servers.push(server)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`, seen, closed }
}

/** Opens the stream: 200 text/event-stream and the `retry` hint, as the server's first block. */
const open = (response: ServerResponse, retry = 2000) => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-store" })
  response.write(`retry: ${retry}\n\n`)
}

/** The events after `lastEventId` (all without one). */
const after = (lastEventId: string | undefined) => EVENTS.slice(EVENTS.findIndex((e) => e.id === lastEventId) + 1)

const problem = (response: ServerResponse, status: number, code: string, headers: Record<string, string> = {}) =>
  response
    .writeHead(status, { "content-type": "application/problem+json", ...headers })
    .end(JSON.stringify({ type: "about:blank", title: code, status, detail: `${code}.`, code }))

/** A follower whose waits are recorded and not waited, and its states. */
const recorded = (options: FollowEventsOptions) => {
  const delays: Array<number> = []
  const states: Array<FollowState> = []
  const follower = followEvents({
    wait: async (milliseconds) => {
      delays.push(milliseconds)
    },
    onState: (state) => states.push(state),
    ...options
  })
  return { follower, delays, states }
}

/** The first `count` events of a follower, then leaves the loop. */
const take = async (follower: AsyncIterable<AccordEvent>, count: number) => {
  const events: Array<AccordEvent> = []
  if (count === 0) return events
  for await (const event of follower) {
    events.push(event)
    if (events.length === count) break
  }
  return events
}

const failureOf = async (follower: AsyncIterable<AccordEvent>): Promise<unknown> => {
  try {
    for await (const _ of follower) {
      // Nothing is expected before the failure.
    }
    return "ended"
  } catch (error) {
    return error
  }
}

describe("followEvents", () => {
  it("resumes after a drop mid-event and after a clean end, with Last-Event-ID, each event once and in order", async () => {
    const { baseUrl, seen } = await serve({
      answer: (index, request, response) => {
        const due = after(request.headers["last-event-id"] as string | undefined)
        open(response, 1500)
        if (index === 0) {
          // Three events and half of the fourth, then the connection breaks.
          response.write(due.slice(0, 3).map(sse).join("") + sse(due[3] ?? envelope(99)).slice(0, 40))
          setTimeout(() => response.destroy(), 20)
        } else if (index === 1) {
          // A heartbeat, three events, then a clean end (the server's drain).
          response.end(": heartbeat\n\n" + due.slice(0, 3).map(sse).join(""))
        } else {
          // The rest, cut at every 7 bytes (UTF-8 and lines split anywhere), then held open.
          const bytes = Buffer.from(due.map(sse).join(""))
          for (let at = 0; at < bytes.length; at += 7) response.write(bytes.subarray(at, at + 7))
        }
      }
    })
    const tokens = ["t1", "t2", "t3"]
    const { follower, delays, states } = recorded({ baseUrl, token: () => tokens.shift() })
    expect(await take(follower, 10)).toEqual(EVENTS)
    expect(follower.lastEventId).toBe(EVENTS[9]?.id)
    expect(seen).toEqual([
      { lastEventId: undefined, authorization: "Bearer t1", accept: "text/event-stream" },
      { lastEventId: EVENTS[2]?.id, authorization: "Bearer t2", accept: "text/event-stream" },
      { lastEventId: EVENTS[5]?.id, authorization: "Bearer t3", accept: "text/event-stream" }
    ])
    // The server's retry time, after the drop and after the end.
    expect(delays).toEqual([1500, 1500])
    expect(states.map((state) => state.state)).toEqual([
      "connecting",
      "open",
      "waiting",
      "connecting",
      "open",
      "waiting",
      "connecting",
      "open"
    ])
  })

  it("starts after the lastEventId it is given, and a string token with extra headers", async () => {
    const { baseUrl, seen } = await serve({
      answer: (_, request, response) => {
        open(response)
        response.write(
          after(request.headers["last-event-id"] as string)
            .map(sse)
            .join("")
        )
      }
    })
    const { follower } = recorded({
      baseUrl: `${baseUrl}/`,
      token: "tok",
      headers: { "x-trace": "1" },
      lastEventId: EVENTS[7]?.id ?? ""
    })
    expect(await take(follower, 2)).toEqual(EVENTS.slice(8))
    expect(seen).toEqual([{ lastEventId: EVENTS[7]?.id, authorization: "Bearer tok", accept: "text/event-stream" }])
  })

  it("honours Retry-After on 429 and 503, and backs off on a network error or a 500", async () => {
    const { baseUrl, seen } = await serve({
      answer: (index, _, response) => {
        if (index === 0) problem(response, 429, "rate_limited", { "retry-after": "3" })
        else if (index === 1) problem(response, 503, "unavailable", { "retry-after": "1" })
        else if (index === 2) response.socket?.destroy()
        else if (index === 3) problem(response, 500, "internal")
        else if (index === 4) problem(response, 429, "too_many_streams")
        else {
          open(response)
          response.write(sse(EVENTS[0] ?? envelope(1)))
        }
      }
    })
    const { follower, delays, states } = recorded({ baseUrl, token: "t", retryDelay: 1000, maxRetryDelay: 3000 })
    expect(await take(follower, 1)).toEqual(EVENTS.slice(0, 1))
    expect(seen).toHaveLength(6)
    expect(delays.slice(0, 2)).toEqual([3000, 1000])
    // Failures 3, 4 and 5 in a row: 1000 * 2^(n-1) capped at 3000, half of it fixed and half random.
    const [third = 0, fourth = 0, fifth = 0] = delays.slice(2)
    expect(third).toBeGreaterThanOrEqual(1500)
    expect(third).toBeLessThanOrEqual(3000)
    expect(fourth).toBeGreaterThanOrEqual(1500)
    expect(fourth).toBeLessThanOrEqual(3000)
    expect(fifth).toBeGreaterThanOrEqual(1500)
    expect(fifth).toBeLessThanOrEqual(3000)
    expect(states.flatMap((state) => (state.state === "waiting" ? [[state.why, state.status]] : []))).toEqual([
      ["retry-after", 429],
      ["retry-after", 503],
      ["backoff", undefined],
      ["backoff", 500],
      ["backoff", 429]
    ])
  })

  it.each([
    [401, "unauthenticated"],
    [401, "invalid_token"],
    [403, "insufficient_scope"],
    [400, "invalid_cursor"],
    [406, "not_acceptable"]
  ])("stops on %i %s with a typed error carrying the problem, asking once", async (status, code) => {
    const { baseUrl, seen } = await serve({ answer: (_, __, response) => problem(response, status, code) })
    const { follower, delays } = recorded({ baseUrl, token: "t" })
    const error = await failureOf(follower)
    expect(error).toBeInstanceOf(EventStreamError)
    expect(error).toMatchObject({ _tag: "EventStreamError", reason: "refused", status, code, problem: { code } })
    expect(seen).toHaveLength(1)
    expect(delays).toEqual([])
  })

  it("stops on a 200 that is not a stream: a server that answers the JSON feed", async () => {
    const { baseUrl } = await serve({
      answer: (_, __, response) =>
        response.writeHead(200, { "content-type": "application/json" }).end('{"data":[],"has_more":false}')
    })
    expect(await failureOf(recorded({ baseUrl }).follower)).toMatchObject({ reason: "not_a_stream", status: 200 })
  })

  it("skips an event of a type it does not know, moving past its id, and stops before one it cannot decode", async () => {
    const newer = { ...envelope(2), type: "card.added", data: {} }
    const broken = { ...envelope(3), sequence: "three" }
    const { baseUrl } = await serve({
      answer: (_, __, response) => {
        open(response)
        response.write(
          sse(envelope(1)) +
            `id: ${newer.id}\ndata: ${JSON.stringify(newer)}\n\n` +
            // Another event type than `message`: not one of Accord's, skipped as EventSource would.
            `event: other\nid: x\ndata: {}\n\n` +
            `id: ${broken.id}\ndata: ${JSON.stringify(broken)}\n\n`
        )
      }
    })
    const { follower } = recorded({ baseUrl })
    const got: Array<AccordEvent> = []
    let failure: unknown
    try {
      for await (const event of follower) got.push(event)
    } catch (error) {
      failure = error
    }
    expect(got).toEqual([envelope(1)])
    expect(failure).toMatchObject({ reason: "undecodable" })
    // Past the skipped ones, not past the undecodable one: a follower made again from it meets that one again.
    expect(follower.lastEventId).toBe("x")
  })

  it("reconnects when the connection goes silent past idleTimeout", async () => {
    const { baseUrl, seen } = await serve({
      answer: (index, request, response) => {
        open(response)
        const due = after(request.headers["last-event-id"] as string | undefined)
        // The first connection sends one event and then nothing, not even a heartbeat.
        response.write((index === 0 ? due.slice(0, 1) : due).map(sse).join(""))
      }
    })
    const { follower } = recorded({ baseUrl, idleTimeout: 100 })
    expect(await take(follower, 3)).toEqual(EVENTS.slice(0, 3))
    expect(seen.map((request) => request.lastEventId)).toEqual([undefined, EVENTS[0]?.id])
  })

  it("ends the iteration when its signal aborts, and closes the connection; leaving the loop closes it too", async () => {
    const { baseUrl, closed } = await serve({
      answer: (_, __, response) => {
        open(response)
        response.write(sse(EVENTS[0] ?? envelope(1)))
      }
    })
    const controller = new AbortController()
    const { follower } = recorded({ baseUrl, signal: controller.signal })
    const got: Array<AccordEvent> = []
    for await (const event of follower) {
      got.push(event)
      controller.abort()
    }
    expect(got).toEqual(EVENTS.slice(0, 1))
    await closed[0]

    expect(await take(recorded({ baseUrl }).follower, 1)).toEqual(EVENTS.slice(0, 1))
    await closed[1]
    // An aborted signal: no request at all.
    const aborted = AbortSignal.abort()
    expect(await take(recorded({ baseUrl, signal: aborted }).follower, 0)).toEqual([])
    expect(await failureOf(recorded({ baseUrl, signal: aborted }).follower)).toBe("ended")
    expect(closed).toHaveLength(2)
  })

  it("stops on a line longer than its bound", async () => {
    const { baseUrl } = await serve({
      answer: (_, __, response) => {
        open(response)
        response.write(`data: ${"x".repeat(5000)}`)
      }
    })
    expect(await failureOf(recorded({ baseUrl, maxEventLength: 1024 }).follower)).toMatchObject({
      reason: "too_large"
    })
  })

  it("is iterated once", () => {
    const follower = followEvents({ baseUrl: "http://127.0.0.1:9/api", signal: AbortSignal.abort() })
    follower[Symbol.asyncIterator]()
    expect(() => follower[Symbol.asyncIterator]()).toThrow(TypeError)
  })
})

describe("retryAfterMilliseconds", () => {
  it("reads delay-seconds and an HTTP date, and nothing else", () => {
    const now = Date.parse("2026-11-29T01:00:00Z")
    expect(retryAfterMilliseconds("7", now)).toBe(7000)
    expect(retryAfterMilliseconds("Sun, 29 Nov 2026 01:00:05 GMT", now)).toBe(5000)
    expect(retryAfterMilliseconds("Sun, 29 Nov 2026 00:59:00 GMT", now)).toBe(0)
    expect(retryAfterMilliseconds(null, now)).toBeUndefined()
    expect(retryAfterMilliseconds("soon", now)).toBeUndefined()
    expect(retryAfterMilliseconds("-1", now)).toBeUndefined()
  })
})
