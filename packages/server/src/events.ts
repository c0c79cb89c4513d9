import { createHash, createHmac } from "node:crypto"
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import { Effect, Fiber, type ManagedRuntime } from "effect"
import {
  DeliveryFailed,
  EventStore,
  exponentialBackoff,
  relayEvents,
  type EventSink,
  type RecordedEvent,
  type Settlement
} from "@accord/domain"
import { toEventEnvelope } from "@accord/contract"
import type { AccordMetrics } from "./metrics.js"

// docs/operations.md, "Events": the sinks the server's relay delivers to. Signed webhooks (Standard Webhooks) and
// NATS JetStream; the relay itself (retries, back-off, claims) is the domain's `relayEvents`.

/** The most of a receiver's answer read: its status decides, its body is only drained (and then not all of it). */
export const MAX_ANSWER_BYTES = 4096

/** `webhook-signature`: `v1,<base64 HMAC-SHA256 of id.timestamp.body>` under each key, space-separated. */
export const signWebhook = (
  keys: ReadonlyArray<Uint8Array>,
  id: string,
  timestampSeconds: number,
  body: string
): string =>
  keys
    .map((key) => `v1,${createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")}`)
    .join(" ")

export interface WebhookSinkOptions {
  readonly url: string
  readonly keys: ReadonlyArray<Uint8Array>
  /** Time to connect (TCP and TLS). */
  readonly connectTimeoutMs: number
  /** Time from the request sent to the answer's status and at most MAX_ANSWER_BYTES of its body. */
  readonly responseTimeoutMs: number
  /** The current time, for `webhook-timestamp`. Default `Date.now`. */
  readonly now?: () => number
}

/** What one POST left: a status, or why there is none. */
type Posted = { readonly status: number } | { readonly error: string }

const httpAgent = new HttpAgent({ keepAlive: true })
const httpsAgent = new HttpsAgent({ keepAlive: true })

/**
 * One POST with its own time-outs: a connection that does not open in time, and an answer that does not come in time,
 * are errors; redirects are never followed (a 3xx is an answer like any other non-2xx); at most MAX_ANSWER_BYTES of
 * the answer are read, then the connection is dropped.
 */
const post = (
  url: URL,
  headers: Readonly<Record<string, string>>,
  body: string,
  options: WebhookSinkOptions,
  signal: AbortSignal
): Promise<Posted> =>
  new Promise((resolve) => {
    const https = url.protocol === "https:"
    const request = (https ? httpsRequest : httpRequest)(url, {
      method: "POST",
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      agent: https ? httpsAgent : httpAgent
    })
    let timer: NodeJS.Timeout | undefined
    let settled = false
    const settle = (posted: Posted) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal.removeEventListener("abort", onAbort)
      resolve(posted)
    }
    const giveUp = (error: string) => {
      settle({ error })
      request.destroy()
    }
    const onAbort = () => giveUp("interrupted")
    signal.addEventListener("abort", onAbort, { once: true })
    const awaitAnswer = () => {
      clearTimeout(timer)
      timer = setTimeout(() => giveUp("no answer in time"), options.responseTimeoutMs)
    }
    timer = setTimeout(() => giveUp("no connection in time"), options.connectTimeoutMs)
    request.on("socket", (socket) => {
      if (!socket.connecting) return awaitAnswer()
      socket.once(https ? "secureConnect" : "connect", awaitAnswer)
    })
    request.on("response", (response: IncomingMessage) => {
      let read = 0
      const done = () => settle({ status: response.statusCode ?? 0 })
      response.on("data", (chunk: Buffer) => {
        read += chunk.length
        if (read < MAX_ANSWER_BYTES) return
        done()
        response.destroy()
      })
      response.on("end", done)
      response.on("error", done)
      response.on("close", done)
    })
    request.on("error", (error: NodeJS.ErrnoException) => settle({ error: error.code ?? error.message }))
    request.end(body)
  })

/**
 * A sink's name that a store may keep (which sinks took an event): the URL's digest, since a URL may carry a
 * credential in its userinfo or query.
 */
const webhookName = (url: string): string => `webhook:${createHash("sha256").update(url).digest("hex").slice(0, 16)}`

/** A webhook endpoint as a sink: the event's envelope POSTed, signed; any 2xx takes it. */
export const webhookSink = (options: WebhookSinkOptions): EventSink => {
  const url = new URL(options.url)
  const now = options.now ?? Date.now
  return {
    name: webhookName(options.url),
    deliver: (recorded: RecordedEvent) =>
      Effect.flatMap(
        Effect.promise((signal) => {
          const body = JSON.stringify(toEventEnvelope(recorded))
          const timestamp = Math.floor(now() / 1000)
          const headers = {
            "content-type": "application/json",
            "user-agent": "Accord-Webhooks",
            "webhook-id": recorded.id,
            "webhook-timestamp": String(timestamp),
            "webhook-signature": signWebhook(options.keys, recorded.id, timestamp, body)
          }
          return post(url, headers, body, options, signal)
        }),
        (posted) =>
          "error" in posted
            ? Effect.fail(new DeliveryFailed({ reason: posted.error }))
            : posted.status >= 200 && posted.status < 300
              ? Effect.void
              : Effect.fail(new DeliveryFailed({ reason: `status ${posted.status}` }))
      )
  }
}

/** The JetStream stream Accord's events go to, created when missing (docs/operations.md, "Events"). */
export const NATS_STREAM = "ACCORD_EVENTS"
export const natsSubject = (type: string): string => `accord.events.${type}`

/** How long a publish waits for JetStream's acknowledgement: its attempt's bound. */
const NATS_PUBLISH_TIMEOUT_MS = 5_000
/** Events delivered at once, and claimed at once: a claim covers what is being attempted, no more. */
const RELAY_CONCURRENCY = 8

/**
 * NATS JetStream as a sink: each event published to `accord.events.<type>` with its id as `Nats-Msg-Id`, so that
 * JetStream's duplicate window drops a redelivery. Connects (and reconnects) on its own; `close` drains.
 */
export const natsSink = async (
  servers: string
): Promise<{ readonly sink: EventSink; readonly close: () => Promise<void> }> => {
  const [{ connect }, { jetstream, jetstreamManager }] = await Promise.all([
    import("@nats-io/transport-node"),
    import("@nats-io/jetstream")
  ])
  const connection = await connect({ servers, maxReconnectAttempts: -1, name: "accord" })
  const manager = await jetstreamManager(connection)
  await manager.streams
    .info(NATS_STREAM)
    .catch(() => manager.streams.add({ name: NATS_STREAM, subjects: [natsSubject(">")] }))
  const stream = jetstream(connection)
  return {
    sink: {
      name: "nats",
      deliver: (recorded) =>
        Effect.tryPromise({
          try: () =>
            stream.publish(natsSubject(recorded.event.type), JSON.stringify(toEventEnvelope(recorded)), {
              msgID: recorded.id,
              timeout: NATS_PUBLISH_TIMEOUT_MS
            }),
          catch: (error) =>
            new DeliveryFailed({ reason: `nats: ${error instanceof Error ? error.message : "refused"}` })
        }).pipe(Effect.asVoid)
    },
    close: () => connection.drain()
  }
}

/** What the relay needs of the server's options (docs/operations.md, "Events"). */
export interface RelaySettings {
  readonly webhookUrls: ReadonlyArray<string>
  /** The `whsec_` keys (`parseWebhookSecrets`); required with webhook URLs. */
  readonly webhookKeys: ReadonlyArray<Uint8Array>
  readonly webhookConnectTimeoutMs: number
  readonly webhookTimeoutMs: number
  readonly natsUrl: string | undefined
  readonly retryForMs: number
  readonly backoffMs: number
  readonly pollMs: number
}

/** A running relay: `close` stops it (an attempt under way is cut; its event is tried again later) and its sinks. */
export interface RunningRelay {
  readonly close: () => Promise<void>
}

/**
 * Starts delivering the store's events to the configured sinks, in the runtime's fiber (docs/operations.md,
 * "Events"); undefined when no sink is configured. A sink that is down delays its events, never the API: the relay
 * runs beside the requests, and readiness does not look at it.
 */
export const startEventRelay = async (
  runtime: ManagedRuntime.ManagedRuntime<EventStore, unknown>,
  settings: RelaySettings,
  hooks: {
    readonly metrics?: AccordMetrics
    readonly onRefused: (event: RecordedEvent, sink: string, reason: string, settlement: Settlement) => void
    /** Each attempt's outcome, once the store has it. */
    readonly onSettled?: (event: RecordedEvent, settlement: Settlement) => void
  }
): Promise<RunningRelay | undefined> => {
  const sinks: Array<EventSink> = settings.webhookUrls.map((url) =>
    webhookSink({
      url,
      keys: settings.webhookKeys,
      connectTimeoutMs: settings.webhookConnectTimeoutMs,
      responseTimeoutMs: settings.webhookTimeoutMs
    })
  )
  const nats = settings.natsUrl === undefined ? undefined : await natsSink(settings.natsUrl)
  if (nats !== undefined) sinks.push(nats.sink)
  if (sinks.length === 0) return undefined
  // A claim is held while its events are attempted (docs/operations.md, "Events"): each attempt tries every sink in
  // turn, each bounded by its time-outs, so a deliverer that died holding a claim delays its events by about that much.
  const attemptBoundMs =
    settings.webhookUrls.length * (settings.webhookConnectTimeoutMs + settings.webhookTimeoutMs) +
    (nats === undefined ? 0 : NATS_PUBLISH_TIMEOUT_MS)
  const observed = hooks.metrics?.observeEvents(() =>
    runtime.runPromise(Effect.flatMap(EventStore, (events) => events.countByStatus))
  )
  const fiber = runtime.runFork(
    relayEvents({
      sinks,
      backoff: exponentialBackoff({ baseMillis: settings.backoffMs }),
      giveUpAfterMillis: settings.retryForMs,
      pollMillis: settings.pollMs,
      concurrency: RELAY_CONCURRENCY,
      batchSize: RELAY_CONCURRENCY,
      leaseMillis: 2 * attemptBoundMs + 1_000,
      onSettled: (pending, settlement, refusals) =>
        Effect.sync(() => {
          observed?.settled(settlement.status, pending.recorded.event.at, new Date())
          for (const { sink, reason } of refusals) hooks.onRefused(pending.recorded, sink, reason, settlement)
          hooks.onSettled?.(pending.recorded, settlement)
        })
    })
  )
  return {
    close: async () => {
      await runtime.runPromise(Fiber.interrupt(fiber))
      await nats?.close()
    }
  }
}
