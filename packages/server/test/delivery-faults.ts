import type { IncomingMessage, ServerResponse } from "node:http"
import { expect } from "@effect/vitest"
import { Redacted } from "effect"
import { parseWebhookSecrets } from "@accord/contract/webhook-secrets"
import { type AccordConfig, createLogger, defaultConfig, startAccord } from "../src/index.js"
import { bearer, USER_TOKEN } from "./cli-helpers.js"
import { newSecret, startReceiver, type Receiver, Waiters } from "./webhook-receiver.js"

// docs/operations.md, "Events": the delivery fault matrix (issue 35). Every store x every fault a webhook endpoint can
// have, each cell a real server (`startAccord`, its API over HTTP) with TWO endpoints, the faulty one first: a relay
// that tried its sinks in turn made the healthy one wait for the faulty one. In each cell the healthy endpoint's
// latency while the other is faulty is judged against its latency while both were healthy, measured in the same cell;
// the faulty one must behave as the rules say (retried on the schedule, 410 disables it, 429 with Retry-After is not
// tried again sooner, a redirect is never followed), and once healthy again it gets every event, each once. The cells
// of a store run in lockstep (each phase in every cell at once), so both of a cell's measurements see the same load.

export const FAULTS = ["down then back", "500", "hanging", "410", "429 with Retry-After", "redirect"] as const
export type Fault = (typeof FAULTS)[number]

/** Events written per phase, one at a time: each a timezone change of the seed's user. */
const PER_PHASE = 8
/** Events written first, not measured: the first deliveries of a process compile its code paths. */
const WARM_UP = 4
/** The relay's waits, short so that retries come soon; the answer time-out is what a hanging endpoint costs. */
const POLL_MS = 10
const BACKOFF_MS = 10
const ANSWER_TIMEOUT_MS = 1_500
/** The Retry-After the 429 carries, in seconds. */
const RETRY_AFTER_S = 1
/** The healthy endpoint's median latency may grow by this factor (plus two polls) while the other is faulty. */
const LATENCY_FACTOR = 5
/** The server's interval between two refusal lines of one sink (DELIVERY_LOG_INTERVAL_MS). */
const LOG_INTERVAL_MS = 30_000

const GONE_LINE = "event sink is gone; it is not attempted again until the server restarts"

/** What the faulty endpoint does now, and what its 429 left. */
interface FaultState {
  readonly fault: Fault
  mode: "healthy" | "faulty"
  /** Where a redirect points: a receiver that must get nothing. */
  redirectTo: string
  /** The event answered 429, when (Date.now()), and when its later requests came. */
  readonly limited: { id: string | undefined; sentAt: number; readonly retriedAt: Array<number> }
}

interface Cell extends FaultState {
  readonly startedAt: number
  readonly secret: string
  readonly lines: ReadonlyArray<Record<string, unknown>>
  readonly logged: Waiters
  readonly healthy: Receiver
  /** Replaced by a new receiver on the same port when a "down" endpoint comes back. */
  faulty: Receiver
  /** Where the redirect points: it must get nothing. */
  readonly target: Receiver
  readonly accord: Awaited<ReturnType<typeof startAccord>>
  readonly faultySink: string
  readonly healthySink: string
  /** Each write's timezone and when it was sent. */
  readonly written: Array<{ readonly timezone: number; readonly at: number }>
}

const answer = (state: FaultState) => (request: IncomingMessage, response: ServerResponse) => {
  if (state.mode === "healthy") return void response.writeHead(204).end()
  const id = String(request.headers["webhook-id"])
  switch (state.fault) {
    case "500":
      return void response.writeHead(500).end("down")
    case "hanging":
      return // never answered: the relay's answer time-out ends the attempt
    case "410":
      return void response.writeHead(410).end()
    case "429 with Retry-After":
      if (state.limited.id === undefined) {
        Object.assign(state.limited, { id, sentAt: Date.now() })
        return void response.writeHead(429, { "retry-after": String(RETRY_AFTER_S) }).end()
      }
      if (id === state.limited.id) state.limited.retriedAt.push(Date.now())
      return void response.writeHead(204).end()
    case "redirect":
      return void response.writeHead(307, { location: state.redirectTo }).end()
    case "down then back":
      // Its receiver is closed while faulty: nothing reaches it then.
      return void response.writeHead(204).end()
  }
}

/** The timezone a delivered body set: which write it was. */
const timezoneOf = (body: string): number => {
  const envelope = JSON.parse(body) as { data?: { changes?: { timezone?: { new?: number } } } }
  return envelope.data?.changes?.timezone?.new ?? Number.NaN
}

const startCell = async (fault: Fault, store: Partial<AccordConfig>, seedFile: string): Promise<Cell> => {
  const startedAt = Date.now()
  const secret = newSecret()
  const state: FaultState = {
    fault,
    mode: "healthy",
    redirectTo: "",
    limited: { id: undefined, sentAt: 0, retriedAt: [] }
  }
  const lines: Array<Record<string, unknown>> = []
  const logged = new Waiters()
  const ok = (_request: IncomingMessage, response: ServerResponse) => void response.writeHead(204).end()
  const [faulty, healthy, target] = await Promise.all([
    startReceiver([secret], answer(state)),
    startReceiver([secret], ok),
    startReceiver([secret], ok)
  ])
  state.redirectTo = target.url
  const accord = await startAccord(
    {
      ...defaultConfig,
      ...store,
      port: 0,
      seedFile,
      scrypt: { N: 1024, r: 8, p: 1 },
      metrics: { host: "127.0.0.1", port: 0 },
      // The faulty endpoint first.
      webhookUrl: [faulty.url, healthy.url],
      webhookSecret: Redacted.make(parseWebhookSecrets(secret) ?? []),
      webhookConnectTimeoutMs: 1_000,
      webhookTimeoutMs: ANSWER_TIMEOUT_MS,
      eventsBackoffMs: BACKOFF_MS,
      eventsPollMs: POLL_MS
    },
    {
      logger: createLogger("info", {
        write: (line: string) => {
          lines.push(JSON.parse(line) as Record<string, unknown>)
          logged.changed()
        }
      })
    }
  )
  // Each endpoint named at start by its scheme, host and path (never its query, which holds a token).
  const sinkOf = (receiver: Receiver) =>
    String(
      lines.find((line) => line["msg"] === "event sink" && line["endpoint"] === receiver.url.split("?")[0])?.["sink"]
    )
  return Object.assign(state, {
    startedAt,
    secret,
    lines,
    logged,
    healthy,
    faulty,
    target,
    accord,
    faultySink: sinkOf(faulty),
    healthySink: sinkOf(healthy),
    written: []
  })
}

/** Writes `count` changes one at a time, each a new timezone, noting when each was sent. */
const write = async (cell: Cell, count: number) => {
  for (let index = 0; index < count; index++) {
    const timezone = 15 * (cell.written.length + 1)
    cell.written.push({ timezone, at: Date.now() })
    const answered = await fetch(`${cell.accord.url}/api/users/v1/preferences/language/`, {
      method: "PUT",
      headers: { ...bearer(USER_TOKEN), "content-type": "application/json" },
      body: JSON.stringify({ timezone })
    })
    expect(answered.status, `${cell.fault}: a write`).toBe(200)
  }
}

const healthyHasAll = (cell: Cell) => cell.healthy.until(() => cell.healthy.deliveries.length >= cell.written.length)

/** The median latency (arrival at the healthy endpoint minus the write's start) of `writes`. */
const medianLatency = (cell: Cell, writes: ReadonlyArray<{ readonly timezone: number; readonly at: number }>) => {
  const arrived = new Map(cell.healthy.deliveries.map((delivery) => [timezoneOf(delivery.body), delivery.at]))
  const latencies = writes.map((write) => (arrived.get(write.timezone) ?? Number.NaN) - write.at).sort((a, b) => a - b)
  return latencies[Math.floor(latencies.length / 2)] ?? Number.NaN
}

const linesOf = (cell: Cell, message: string, sink: string) =>
  cell.lines.filter((line) => line["msg"] === message && line["sink"] === sink)

const metric = async (cell: Cell, name: string, sink: string, status?: string) => {
  const text = await (await fetch(`${cell.accord.metricsUrl ?? ""}/metrics`)).text()
  const labels = status === undefined ? `sink="${sink}"` : `sink="${sink}",status="${status}"`
  return Number(new RegExp(`^${name}\\{${labels}\\} (\\d+)$`, "m").exec(text)?.[1] ?? Number.NaN)
}

/** What the faulty endpoint must show while faulty, per the rules (docs/operations.md, "Events"). */
const whileFaulty = async (cell: Cell) => {
  const refusedWith = (reason: string) =>
    cell.logged.until(() =>
      linesOf(cell, "event delivery failed; retrying", cell.faultySink).some((line) => line["reason"] === reason)
    )
  switch (cell.fault) {
    case "down then back":
      // Refused; or, on a connection kept alive from before, reset.
      return cell.logged.until(() =>
        linesOf(cell, "event delivery failed; retrying", cell.faultySink).some((line) =>
          ["ECONNREFUSED", "ECONNRESET"].includes(String(line["reason"]))
        )
      )
    case "500":
      return refusedWith("status 500")
    case "hanging":
      return refusedWith("no answer in time")
    case "redirect":
      // Never followed: the refusal is the 307 itself, and its Location (a receiver of the test's) gets nothing.
      return refusedWith("status 307")
    case "429 with Retry-After":
      return cell.faulty.until(() => cell.limited.retriedAt.length >= 1)
    case "410": {
      await cell.logged.until(() => cell.lines.some((line) => line["msg"] === GONE_LINE))
      expect(
        cell.lines.find((line) => line["msg"] === GONE_LINE),
        "410: the line names the endpoint, not its query"
      ).toMatchObject({ sink: cell.faultySink, endpoint: cell.faulty.url.split("?")[0], reason: "status 410" })
      expect(await metric(cell, "accord_event_sink_disabled", cell.faultySink), "410: disabled").toBe(1)
      // Nothing more goes to it, while the other endpoint keeps getting every event.
      const requests = cell.faulty.requests()
      await write(cell, 2)
      await healthyHasAll(cell)
      expect(cell.faulty.requests(), "410: no request after it").toBe(requests)
      expect(
        await metric(cell, "accord_event_sink_deliveries", cell.faultySink, "pending"),
        "410: its deliveries kept, pending"
      ).toBe(PER_PHASE + 2)
      return
    }
  }
}

/**
 * One store's row of the matrix, its cells in lockstep; a failed expectation names its cell. `store` gives each cell
 * the options of a store of its own.
 */
export const runFaultMatrix = async (store: (fault: Fault) => Promise<Partial<AccordConfig>>, seedFile: string) => {
  const cells = await Promise.all(FAULTS.map(async (fault) => startCell(fault, await store(fault), seedFile)))
  try {
    for (const cell of cells) {
      expect([cell.faultySink, cell.healthySink], `${cell.fault}: the sinks named at start`).toEqual([
        expect.stringMatching(/^webhook:[0-9a-f]{16}$/),
        expect.stringMatching(/^webhook:[0-9a-f]{16}$/)
      ])
    }

    // The reference: both endpoints healthy (after a warm-up).
    for (const count of [WARM_UP, PER_PHASE]) {
      await Promise.all(
        cells.map(async (cell) => {
          await write(cell, count)
          await healthyHasAll(cell)
          await cell.faulty.until(() => cell.faulty.deliveries.length >= cell.written.length)
        })
      )
    }

    // One endpoint faulty: the healthy one's events all arrive, about as soon as before.
    await Promise.all(
      cells.map(async (cell) => {
        cell.mode = "faulty"
        if (cell.fault === "down then back") await cell.faulty.close()
        await write(cell, PER_PHASE)
        await healthyHasAll(cell)
      })
    )
    for (const cell of cells) {
      const reference = medianLatency(cell, cell.written.slice(WARM_UP, WARM_UP + PER_PHASE))
      const faulty = medianLatency(cell, cell.written.slice(WARM_UP + PER_PHASE))
      expect(
        faulty,
        `${cell.fault}: the healthy endpoint's median latency while the other is faulty (reference ${reference} ms)`
      ).toBeLessThanOrEqual(LATENCY_FACTOR * reference + 2 * POLL_MS)
    }
    for (const cell of cells.filter((each) => each.fault !== "410" && each.fault !== "429 with Retry-After")) {
      expect(
        await metric(cell, "accord_event_sink_deliveries", cell.faultySink, "pending"),
        `${cell.fault}: the faulty endpoint's deliveries pending`
      ).toBeGreaterThan(0)
    }

    // The faulty one, as the rules say; then healthy again (but the one that said 410): every event reaches it too,
    // each once. Each cell at its own pace from here: the latencies are measured.
    await Promise.all(
      cells.map(async (cell) => {
        await whileFaulty(cell)
        if (cell.fault === "410") return
        if (cell.fault === "down then back") {
          cell.faulty = await startReceiver([cell.secret], answer(cell), cell.faulty.port)
        }
        cell.mode = "healthy"
        // A "down" endpoint's new receiver gets the events of the faulty phase only.
        const all = cell.fault === "down then back" ? PER_PHASE : cell.written.length
        await cell.faulty.until(() => cell.faulty.deliveries.length >= all)
        await cell.logged.until(() => linesOf(cell, "event delivery recovered", cell.faultySink).length >= 1)
      })
    )
    for (const cell of cells) {
      const ids = cell.healthy.deliveries.map((delivery) => delivery.id)
      expect(new Set(ids).size, `${cell.fault}: the healthy endpoint, each once`).toBe(ids.length)
      expect(ids, `${cell.fault}: the healthy endpoint, every event`).toHaveLength(cell.written.length)
      expect(cell.healthy.unverified, `${cell.fault}: signatures`).toEqual([])
      expect(cell.target.requests(), `${cell.fault}: nothing reached elsewhere`).toBe(0)
      if (cell.fault !== "410") {
        const faultyIds = cell.faulty.deliveries.map((delivery) => delivery.id)
        expect(new Set(faultyIds).size, `${cell.fault}: the faulty endpoint, each once`).toBe(faultyIds.length)
        expect(
          await metric(cell, "accord_event_sink_deliveries", cell.faultySink, "pending"),
          `${cell.fault}: nothing left pending`
        ).toBe(0)
      }
      // Bounded: one refusal line per sink per interval (the first at once), however many attempts failed.
      const intervals = Math.floor((Date.now() - cell.startedAt) / LOG_INTERVAL_MS)
      expect(
        linesOf(cell, "event delivery failed; retrying", cell.faultySink).length,
        `${cell.fault}: refusal lines`
      ).toBeLessThanOrEqual(1 + intervals)
      expect(linesOf(cell, "event delivery failed; retrying", cell.healthySink), `${cell.fault}: healthy`).toEqual([])
    }
    // No sooner than it said: each later request of the event answered 429 came Retry-After after it or later.
    const limited = cells.find((cell) => cell.fault === "429 with Retry-After")?.limited
    expect(
      limited?.retriedAt.map((at) => at - limited.sentAt >= RETRY_AFTER_S * 1000),
      `429: its event came again ${JSON.stringify(limited?.retriedAt.map((at) => at - limited.sentAt))} ms after it`
    ).toEqual(limited?.retriedAt.map(() => true))
  } finally {
    await Promise.all(
      cells.map(async (cell) => {
        await cell.accord.close()
        await Promise.all([cell.faulty.close(), cell.healthy.close(), cell.target.close()])
      })
    )
  }
}
