import { createHash, createHmac } from "node:crypto"
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import { Cause, Effect, Fiber, type ManagedRuntime } from "effect"
import type { Logger } from "pino"
import {
  DeliveryFailed,
  EventStore,
  exponentialBackoff,
  pruneDeliveredEvents,
  relayEvents,
  type EventSink,
  type RecordedEvent,
  type RelayObserver,
  type Settlement
} from "@accord/domain"
import { toEventEnvelope } from "@accord/contract"
import type { AccordMetrics } from "./metrics.js"
import { deliveryLogging } from "./throttled-log.js"

// docs/operations.md, "Events": the sinks the server's relay delivers to. Signed webhooks (Standard Webhooks) and
// NATS JetStream; the relay itself (each sink's claims, retries and back-off) is the domain's `relayEvents`.

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
  /** The current time, for `webhook-timestamp` and an HTTP-date `Retry-After`. Default `Date.now`. */
  readonly now?: () => number
}

/** What one POST left: a status (and the answer's `Retry-After`), or why there is none. */
type Posted = { readonly status: number; readonly retryAfter: string | undefined } | { readonly error: string }

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
      const retryAfter = response.headers["retry-after"]
      const done = () => settle({ status: response.statusCode ?? 0, retryAfter })
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
 * A sink's name that a store may keep (each sink's progress): the URL's digest, since a URL may carry a credential in
 * its userinfo or query.
 */
const webhookName = (url: string): string => `webhook:${createHash("sha256").update(url).digest("hex").slice(0, 16)}`

/**
 * A URL as the log shows it, so an operator can tell which endpoint a sink's name stands for: its scheme, host and
 * path, never its userinfo, query or fragment (either may carry a credential).
 */
export const endpointOf = (url: string): string => {
  const parsed = new URL(url)
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`
}

/** `Retry-After`'s HTTP-date (IMF-fixdate, RFC 9110). */
const HTTP_DATE = /^[A-Z][a-z]{2}, [0-9]{2} [A-Z][a-z]{2} [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$/

/**
 * A `Retry-After` as milliseconds from `now`: delay-seconds, or an HTTP-date (0 when past); undefined when it is
 * neither. Read only up to a bound: the header is a receiver's, which the server does not run.
 */
export const parseRetryAfter = (value: string | undefined, now: number): number | undefined => {
  if (value === undefined || value.length > 64) return undefined
  const text = value.trim()
  if (/^[0-9]{1,10}$/.test(text)) return Number(text) * 1000
  if (!HTTP_DATE.test(text)) return undefined
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/**
 * What an answer's status means (Standard Webhooks): any 2xx takes the event; 410 says the endpoint is gone (the
 * relay stops attempting it); 429 and 503 with a `Retry-After` are retried no sooner than it says; anything else is
 * retried on the schedule.
 */
const outcomeOf = (status: number, retryAfter: string | undefined, now: number): DeliveryFailed | undefined => {
  if (status >= 200 && status < 300) return undefined
  if (status === 410) return new DeliveryFailed({ reason: "status 410", gone: true })
  const wait = status === 429 || status === 503 ? parseRetryAfter(retryAfter, now) : undefined
  return wait === undefined
    ? new DeliveryFailed({ reason: `status ${status}` })
    : new DeliveryFailed({ reason: `status ${status}`, retryAfterMillis: wait })
}

/** A webhook endpoint as a sink: the event's envelope POSTed, signed; any 2xx takes it. */
export const webhookSink = (options: WebhookSinkOptions): EventSink => {
  const url = new URL(options.url)
  const now = options.now ?? Date.now
  return {
    name: webhookName(options.url),
    attemptTimeoutMillis: options.connectTimeoutMs + options.responseTimeoutMs,
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
        (posted) => {
          if ("error" in posted) return Effect.fail(new DeliveryFailed({ reason: posted.error }))
          const failure = outcomeOf(posted.status, posted.retryAfter, now())
          return failure === undefined ? Effect.void : Effect.fail(failure)
        }
      )
  }
}

/** The JetStream stream Accord's events go to, created when missing (docs/operations.md, "Events"). */
export const NATS_STREAM = "ACCORD_EVENTS"
export const natsSubject = (type: string): string => `accord.events.${type}`

/** How long a publish waits for JetStream's acknowledgement: its attempt's bound. */
const NATS_PUBLISH_TIMEOUT_MS = 5_000
/** The waits between two attempts to reach NATS before it first answered: from the first to the longest. */
export const NATS_CONNECT_RETRY_MIN_MS = 250
export const NATS_CONNECT_RETRY_MAX_MS = 5_000
/** Events delivered at once per sink, and claimed at once: a claim covers what is being attempted, no more. */
const RELAY_CONCURRENCY = 8
/** The longest a `Retry-After` holds a sink back (a longer one is cut to it). */
export const MAX_RETRY_AFTER_MS = 3_600_000

/** The NATS servers as the log shows them: each one's scheme, host and port, never a user or a password. */
export const natsServersOf = (servers: string): string =>
  servers
    .split(",")
    .map((server) => {
      try {
        const parsed = new URL(server.trim())
        return `${parsed.protocol}//${parsed.host}`
      } catch {
        return "(unparsable)"
      }
    })
    .join(",")

/** What the NATS sink tells its host of its connection. */
export interface NatsSinkHooks {
  /** The first attempt to reach NATS failed: it is tried again (and again) until it answers. */
  readonly unreachable?: (reason: string) => void
  /** Connected (`again`: after losing the connection). */
  readonly connected?: (again: boolean) => void
  /** The connection was lost: the client reconnects on its own. */
  readonly disconnected?: () => void
}

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/**
 * NATS JetStream as a sink: each event published to `accord.events.<type>` with its id as `Nats-Msg-Id`, so that
 * JetStream's duplicate window drops a redelivery. It connects in the background, so a NATS that is down at start
 * delays the events, never the server: until it first answers (and its stream exists), every attempt fails `nats:
 * not connected` and is retried on the schedule; after that the client reconnects on its own. `ready` resolves once
 * connected (or closed); `close` drains.
 */
export const natsSink = async (
  servers: string,
  hooks: NatsSinkHooks = {}
): Promise<{ readonly sink: EventSink; readonly ready: Promise<void>; readonly close: () => Promise<void> }> => {
  const [{ connect }, { jetstream, jetstreamManager }] = await Promise.all([
    import("@nats-io/transport-node"),
    import("@nats-io/jetstream")
  ])
  type Connection = Awaited<ReturnType<typeof connect>>
  let connection: Connection | undefined
  let stream: ReturnType<typeof jetstream> | undefined
  let closed = false
  let stopWaiting: (() => void) | undefined
  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms)
      stopWaiting = () => {
        clearTimeout(timer)
        resolve()
      }
    })
  const watch = async (watched: Connection) => {
    for await (const status of watched.status()) {
      if (status.type === "disconnect") hooks.disconnected?.()
      else if (status.type === "reconnect") hooks.connected?.(true)
    }
  }
  const ready = (async () => {
    for (let failures = 0; !closed; failures++) {
      try {
        const candidate = await connect({ servers, maxReconnectAttempts: -1, name: "accord" })
        try {
          if (closed) return void (await candidate.close())
          const manager = await jetstreamManager(candidate)
          await manager.streams
            .info(NATS_STREAM)
            .catch(() => manager.streams.add({ name: NATS_STREAM, subjects: [natsSubject(">")] }))
        } catch (error) {
          await candidate.close().catch(() => {})
          throw error
        }
        if (closed) return void (await candidate.close())
        connection = candidate
        stream = jetstream(candidate)
        hooks.connected?.(false)
        void watch(candidate).catch(() => {})
        return
      } catch (error) {
        if (failures === 0) hooks.unreachable?.(messageOf(error))
        await pause(Math.min(NATS_CONNECT_RETRY_MAX_MS, NATS_CONNECT_RETRY_MIN_MS * 2 ** failures))
      }
    }
  })()
  return {
    sink: {
      name: "nats",
      attemptTimeoutMillis: NATS_PUBLISH_TIMEOUT_MS,
      deliver: (recorded) =>
        Effect.suspend(() => {
          const connected = stream
          if (connected === undefined) return Effect.fail(new DeliveryFailed({ reason: "nats: not connected" }))
          return Effect.tryPromise({
            try: () =>
              connected.publish(natsSubject(recorded.event.type), JSON.stringify(toEventEnvelope(recorded)), {
                msgID: recorded.id,
                timeout: NATS_PUBLISH_TIMEOUT_MS
              }),
            catch: (error) =>
              new DeliveryFailed({ reason: `nats: ${error instanceof Error ? error.message : "refused"}` })
          }).pipe(Effect.asVoid)
        })
    },
    ready,
    // An attempt to connect still under way is not waited for (it may take the client's whole connect time-out):
    // it closes what it opens once it sees `closed`.
    close: async () => {
      closed = true
      stopWaiting?.()
      await connection?.drain()
    }
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
  /** Delivered events older than this many days are removed (SQL stores); 0 keeps them. */
  readonly retentionDays: number
}

/** What the relay tells its host, besides the metrics. */
export interface RelayHooks {
  readonly metrics?: AccordMetrics
  /** Where its lines go (docs/operations.md, "Events"); none when absent. */
  readonly logger?: Logger
  /** A defect's own words for the log, without a stack or a statement's parameters. Default: its message. */
  readonly describe?: (failure: unknown) => string
  /** How often, at most, a sink's refusals are logged while they go on. Default `DELIVERY_LOG_INTERVAL_MS`. */
  readonly logIntervalMs?: number
  /** Each attempt's outcome, once the store has it; `failure` is the sink's refusal. */
  readonly onSettled?: (
    event: RecordedEvent,
    sink: string,
    settlement: Settlement,
    failure: DeliveryFailed | undefined
  ) => void
}

/** A running relay: `close` stops it (an attempt under way is cut; its event is tried again later) and its sinks. */
export interface RunningRelay {
  readonly close: () => Promise<void>
}

const DAY_MS = 86_400_000

const messageOfCause = (failure: unknown): string => {
  const error = Cause.isCause(failure) ? Cause.squash(failure) : failure
  return error instanceof Error ? error.message : String(error)
}

/**
 * Starts delivering the store's events to the configured sinks, each in a loop of its own in the runtime
 * (docs/operations.md, "Events"), and removing delivered events past the retention; undefined when no sink is
 * configured. A sink that is down delays its own events, never another sink's or the API: the relay runs beside the
 * requests, readiness does not look at it, and a NATS that does not answer yet is waited for in the background.
 */
export const startEventRelay = async (
  runtime: ManagedRuntime.ManagedRuntime<EventStore, unknown>,
  settings: RelaySettings,
  hooks: RelayHooks = {}
): Promise<RunningRelay | undefined> => {
  const { logger, metrics } = hooks
  const describe = hooks.describe ?? messageOfCause
  const webhookUrls = [...new Set(settings.webhookUrls)]
  const sinks: Array<EventSink> = webhookUrls.map((url) =>
    webhookSink({
      url,
      keys: settings.webhookKeys,
      connectTimeoutMs: settings.webhookConnectTimeoutMs,
      responseTimeoutMs: settings.webhookTimeoutMs
    })
  )
  const endpoints = new Map(sinks.map((sink, index) => [sink.name, endpointOf(webhookUrls[index] ?? "")]))
  if (sinks.length === 0 && settings.natsUrl === undefined) return undefined
  const observed = metrics?.observeEvents({
    sinks: [...sinks.map((sink) => sink.name), ...(settings.natsUrl === undefined ? [] : ["nats"])],
    countByStatus: () => runtime.runPromise(Effect.flatMap(EventStore, (events) => events.countByStatus)),
    countBySink: () => runtime.runPromise(Effect.flatMap(EventStore, (events) => events.countBySink))
  })
  for (const [sink, endpoint] of endpoints) logger?.info({ sink, endpoint }, "event sink")
  const nats =
    settings.natsUrl === undefined
      ? undefined
      : await natsSink(settings.natsUrl, {
          unreachable: (reason) => {
            observed?.natsConnected(false)
            logger?.warn(
              { sink: "nats", error: reason },
              "NATS is unreachable; events are kept and published once it answers"
            )
          },
          connected: (again) => {
            observed?.natsConnected(true)
            logger?.info({ sink: "nats" }, again ? "NATS reconnected" : "NATS connected")
          },
          disconnected: () => {
            observed?.natsConnected(false)
            logger?.warn({ sink: "nats" }, "NATS disconnected; reconnecting")
          }
        })
  if (nats !== undefined) {
    sinks.push(nats.sink)
    logger?.info({ sink: "nats", servers: natsServersOf(settings.natsUrl ?? "") }, "event sink")
  }
  const deliveries = logger === undefined ? undefined : deliveryLogging(logger, hooks.logIntervalMs)
  const observer: RelayObserver = {
    settled: (delivery, settlement, failure) =>
      Effect.sync(() => {
        const { recorded, sink } = delivery
        observed?.settled(sink, settlement.status, recorded.event.at, new Date())
        if (failure === undefined) deliveries?.delivered(sink)
        else {
          deliveries?.refused(
            sink,
            { eventId: recorded.id, type: recorded.event.type, reason: failure.reason, attempts: settlement.attempts },
            settlement.status === "failed"
          )
        }
        hooks.onSettled?.(recorded, sink, settlement, failure)
      }),
    started: (sink, restarts) =>
      Effect.sync(() => {
        observed?.running(sink, true)
        if (restarts > 0) logger?.info({ sink, restarts }, "event relay restarted")
      }),
    died: (sink, cause, restartInMillis) =>
      Effect.sync(() => {
        observed?.running(sink, false)
        observed?.restarted(sink)
        logger?.error(
          { sink, error: describe(cause), restartInMs: restartInMillis },
          "event relay stopped on a defect; restarting"
        )
      }),
    gone: (sink, reason) =>
      Effect.sync(() => {
        observed?.disabled(sink)
        logger?.error(
          { sink, ...(endpoints.has(sink) && { endpoint: endpoints.get(sink) }), reason },
          "event sink is gone; it is not attempted again until the server restarts"
        )
      })
  }
  const relay = relayEvents({
    sinks,
    backoff: exponentialBackoff({ baseMillis: settings.backoffMs }),
    giveUpAfterMillis: settings.retryForMs,
    pollMillis: settings.pollMs,
    concurrency: RELAY_CONCURRENCY,
    batchSize: RELAY_CONCURRENCY,
    maxRetryAfterMillis: MAX_RETRY_AFTER_MS,
    observer
  })
  const retention =
    settings.retentionDays === 0
      ? Effect.never
      : pruneDeliveredEvents({
          retentionMillis: settings.retentionDays * DAY_MS,
          onPruned: (count) =>
            Effect.sync(() => {
              observed?.pruned(count)
              logger?.info({ count, retentionDays: settings.retentionDays }, "delivered events pruned")
            }),
          onDefect: (cause) =>
            Effect.sync(() =>
              logger?.error(
                { error: describe(cause) },
                "event retention stopped on a defect; trying again in 10 minutes"
              )
            )
        })
  const fiber = runtime.runFork(Effect.all([relay, retention], { concurrency: "unbounded", discard: true }))
  return {
    close: async () => {
      await runtime.runPromise(Fiber.interrupt(fiber))
      await nats?.close()
    }
  }
}
