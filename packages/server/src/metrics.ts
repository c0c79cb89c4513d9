import { createServer } from "node:http"
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type PrometheusContentType
} from "prom-client"
import { methodLabel, type DeprecatedCall, type RequestLog } from "@accord/core"
import type { ScryptHasherLoad } from "@accord/node/scrypt"
import { listen, type ClientErrorLog, type StandaloneServerOptions } from "@accord/node/server"
import type { PgPoolStats } from "@accord/store-postgres"
import type { SharedLimiterStats } from "@accord/rate-limit"
import type { DeliveryStatus, SinkBacklog } from "@accord/domain"

// Label values come from fixed sets only (docs/operations.md, "Metrics"): a client chooses its method and path, so
// neither becomes a label as sent (core's `methodLabel`; the route template or UNMATCHED_ROUTE).
/** The route of a request no route matched, or refused before routing (a 404, 414, 431...): never its path. */
export const UNMATCHED_ROUTE = "unmatched"

/**
 * Seconds. The memory store answers in well under a millisecond, a hash at the production cost takes a few hundred
 * milliseconds, and nothing waits longer than the request timeout (30 s by default).
 */
export const DURATION_BUCKETS: ReadonlyArray<number> = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30
]

/** The hooks a standalone server takes, each counting what it reports. */
export type MetricsHooks = Required<
  Pick<StandaloneServerOptions, "onRequest" | "onResponse" | "onClientError" | "onDeprecatedCall">
>

/** A service's metrics: the hooks to give its server, and the views its hasher and pool report their load through. */
export interface AccordMetrics extends MetricsHooks {
  readonly registry: Registry
  /** For `ScryptHasherOptions.observeLoad`. */
  readonly observeHashing: (load: ScryptHasherLoad) => void
  /** For `PostgresStoreOptions.observePool`; the pool's metrics exist once a pool is observed. */
  readonly observePool: (pool: PgPoolStats) => void
  /**
   * The relay's metrics (docs/operations.md, "Events"), which exist once a relay runs: the counts are read from the
   * store when scraped, the rest is told as it happens.
   */
  readonly observeEvents: (reads: EventReads) => EventMetrics
  /**
   * A shared rate limit's counts, read when scraped (docs/operations.md, "Rate limits"); its metrics exist once a
   * limiter with a store (cluster, PostgreSQL, Redis) is observed.
   */
  readonly observeRateLimit: (stats: () => SharedLimiterStats) => void
  /** The events streams' gauge and counter (docs/operations.md, "Live events"), for `EventStreamOptions`. */
  readonly eventStreams: {
    readonly onOpenChange: (delta: 1 | -1) => void
    readonly onEventsSent: (count: number) => void
  }
}

/** What the event metrics read from the store when scraped. */
export interface EventReads {
  /** The relay's sinks by name: each has its series from the start, 0 until something happens. */
  readonly sinks: ReadonlyArray<string>
  readonly countByStatus: () => Promise<Readonly<Record<DeliveryStatus, number>>>
  readonly countBySink: () => Promise<ReadonlyArray<SinkBacklog>>
}

/** What the relay tells its metrics. */
export interface EventMetrics {
  /** An attempt at a delivery to `sink` left `status`. */
  readonly settled: (sink: string, status: DeliveryStatus, recordedAt: Date, now: Date) => void
  /** A sink's delivery loop runs, or stopped on a defect (and restarts). */
  readonly running: (sink: string, running: boolean) => void
  readonly restarted: (sink: string) => void
  /** A sink said it is gone (410): not attempted until the process restarts. */
  readonly disabled: (sink: string) => void
  readonly natsConnected: (connected: boolean) => void
  /** Delivered events removed past the retention. */
  readonly pruned: (count: number) => void
}

/**
 * Registers Accord's metrics and Node's process metrics (`collectDefaultMetrics`) in `registry`, a new one by default
 * so that several services in one process (tests) keep apart.
 */
export const createMetrics = (registry: Registry = new Registry()): AccordMetrics => {
  const registers = [registry]
  const requests = new Counter({
    name: "accord_http_requests_total",
    help: "HTTP requests answered, by method, route template and status (refusals before routing: route unmatched).",
    labelNames: ["method", "route", "status"] as const,
    registers
  })
  const duration = new Histogram({
    name: "accord_http_request_duration_seconds",
    help: "Time the handler took to answer, by method, route template and status.",
    labelNames: ["method", "route", "status"] as const,
    buckets: [...DURATION_BUCKETS],
    registers
  })
  // docs/api.md, "Versioning": who still calls a deprecated path before its sunset, by kind of credential only.
  const deprecatedCalls = new Counter({
    name: "accord_deprecated_calls_total",
    help: "Calls of a deprecated path, by route template and kind of credential (user, application, none; unchecked: answered 410 past its sunset).",
    labelNames: ["route", "credential"] as const,
    registers
  })
  const inFlight = new Gauge({
    name: "accord_http_requests_in_flight",
    help: "Requests the handler has taken and not answered yet.",
    registers
  })

  /** A gauge read when scraped: the hasher and the pool keep their own counts. */
  const liveGauge = (name: string, help: string, read: () => number) =>
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(read())
      }
    })

  /** A counter whose count another object keeps, shown when scraped (reset, then the count: a counter cannot be set). */
  const liveCounter = <L extends string>(
    name: string,
    help: string,
    labelNames: ReadonlyArray<L>,
    read: () => ReadonlyArray<readonly [Partial<Record<L, string>>, number]>
  ) =>
    new Counter({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset()
        for (const [labels, count] of read()) this.inc(labels, count)
      }
    })

  let hashing: ScryptHasherLoad | undefined
  liveGauge("accord_password_hashes_running", "Password hashes (or checks) computing now.", () => hashing?.running ?? 0)
  liveGauge("accord_password_hashes_waiting", "Password hashes waiting for a slot.", () => hashing?.waiting ?? 0)
  liveGauge(
    "accord_password_hashes_max_running",
    "Password hashes computed at once (SCRYPT_MAX_CONCURRENT).",
    () => hashing?.maxConcurrent ?? 0
  )
  liveGauge(
    "accord_password_hashes_max_waiting",
    "Password hashes allowed to wait (SCRYPT_MAX_QUEUED); past it, 503.",
    () => hashing?.maxQueued ?? 0
  )
  // The hasher counts; the counter shows its total.
  liveCounter(
    "accord_password_hashes_rejected_total",
    "Password hashes refused because every slot and the queue were taken (answered 503).",
    [],
    () => [[{}, hashing?.rejected ?? 0]]
  )

  let pool: PgPoolStats | undefined
  const registerPoolGauges = () => {
    liveGauge("accord_pg_pool_connections", "PostgreSQL connections open, idle or in use.", () => pool?.total ?? 0)
    liveGauge("accord_pg_pool_connections_idle", "PostgreSQL connections open and idle.", () => pool?.idle ?? 0)
    liveGauge("accord_pg_pool_max_connections", "PostgreSQL connections the pool may open.", () => pool?.max ?? 0)
    liveGauge(
      "accord_pg_pool_requests_waiting",
      "Queries waiting for a PostgreSQL connection (every one is in use).",
      () => pool?.waiting ?? 0
    )
  }

  const streamsOpen = new Gauge({
    name: "accord_events_streams_open",
    help: "Events streams (GET events with Accept: text/event-stream) open now.",
    registers
  })
  const streamEvents = new Counter({
    name: "accord_events_stream_events_sent_total",
    help: "Events sent on events streams (replayed and live).",
    registers
  })

  collectDefaultMetrics({ register: registry })

  return {
    registry,
    onRequest: () => inFlight.inc(),
    onResponse: (log: RequestLog) => {
      inFlight.dec()
      const labels = { method: methodLabel(log.method), route: log.route ?? UNMATCHED_ROUTE, status: log.status }
      requests.inc(labels)
      duration.observe(labels, log.durationMs / 1000)
    },
    onDeprecatedCall: (call: DeprecatedCall) => deprecatedCalls.inc({ route: call.route, credential: call.credential }),
    // No duration: Node or the guard answered before the handler took the request (as in its log line).
    onClientError: (log: ClientErrorLog) =>
      requests.inc({ method: methodLabel(log.method), route: UNMATCHED_ROUTE, status: log.status }),
    eventStreams: {
      onOpenChange: (delta) => streamsOpen.inc(delta),
      onEventsSent: (count) => streamEvents.inc(count)
    },
    observeHashing: (load) => {
      hashing = load
    },
    observePool: (observed) => {
      if (pool === undefined) registerPoolGauges()
      pool = observed
    },
    observeRateLimit: (stats) => {
      liveGauge(
        "accord_rate_limit_limiting_locally",
        "1 while this process limits each credential by itself: its rate limit store failed and has not answered in time since (under --workers, the workers doing so).",
        () => (stats().limitingLocally ? 1 : 0)
      )
      liveCounter("accord_rate_limit_store_statements_total", "Statements sent to the rate limit store.", [], () => [
        [{}, stats().statements]
      ])
      liveCounter(
        "accord_rate_limit_store_failures_total",
        "Rate limit store failures: errors, and statements unanswered in time.",
        [],
        () => [[{}, stats().storeFailures]]
      )
      liveCounter(
        "accord_rate_limit_local_decisions_total",
        "Requests this process's own limit decided, by why (store_failed, or store_busy: no turn in time) and result.",
        ["reason", "result"] as const,
        () => {
          const { local } = stats()
          return [
            [{ reason: "store_failed", result: "allowed" }, local.failed.allowed],
            [{ reason: "store_failed", result: "refused" }, local.failed.refused],
            [{ reason: "store_busy", result: "allowed" }, local.busy.allowed],
            [{ reason: "store_busy", result: "refused" }, local.busy.refused]
          ]
        }
      )
    },
    observeEvents: ({ sinks, countByStatus, countBySink }) => {
      new Gauge({
        name: "accord_events",
        help: "Events the store holds, by delivery status (pending, delivered, failed), read when scraped.",
        labelNames: ["status"] as const,
        registers,
        async collect() {
          const counts = await countByStatus().catch(() => undefined)
          if (counts === undefined) return
          for (const [status, count] of Object.entries(counts)) this.set({ status }, count)
        }
      })
      new Gauge({
        name: "accord_event_sink_deliveries",
        help: "Each sink's deliveries still to make (pending) and given up (failed), read when scraped.",
        labelNames: ["sink", "status"] as const,
        registers,
        async collect() {
          const backlogs = await countBySink().catch(() => undefined)
          if (backlogs === undefined) return
          this.reset()
          for (const sink of sinks) for (const status of ["pending", "failed"]) this.set({ sink, status }, 0)
          for (const { sink, pending, failed } of backlogs) {
            this.set({ sink, status: "pending" }, pending)
            this.set({ sink, status: "failed" }, failed)
          }
        }
      })
      const attempts = new Counter({
        name: "accord_event_deliveries_total",
        help: "Delivery attempts, by sink and what they left: delivered, pending (to retry) or failed (given up).",
        labelNames: ["sink", "status"] as const,
        registers
      })
      const latency = new Histogram({
        name: "accord_event_delivery_latency_seconds",
        help: "Time from an event's change to its delivery to a sink, by sink.",
        labelNames: ["sink"] as const,
        buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 30, 60, 300, 3600, 86_400],
        registers
      })
      const running = new Gauge({
        name: "accord_event_relay_running",
        help: "1 while a sink's delivery loop runs; 0 while it waits to restart after a defect.",
        labelNames: ["sink"] as const,
        registers
      })
      const restarts = new Counter({
        name: "accord_event_relay_restarts_total",
        help: "Times a sink's delivery loop stopped on a defect and was restarted.",
        labelNames: ["sink"] as const,
        registers
      })
      const disabled = new Gauge({
        name: "accord_event_sink_disabled",
        help: "1 once a sink answered 410 Gone: not attempted again until the process restarts.",
        labelNames: ["sink"] as const,
        registers
      })
      for (const sink of sinks) {
        attempts.inc({ sink, status: "delivered" }, 0)
        running.set({ sink }, 0)
        restarts.inc({ sink }, 0)
        disabled.set({ sink }, 0)
      }
      const natsConnected = sinks.includes("nats")
        ? new Gauge({
            name: "accord_event_nats_connected",
            help: "1 while the NATS sink is connected (its stream ready); 0 before it first answers and while it reconnects.",
            registers
          })
        : undefined
      natsConnected?.set(0)
      const pruned = new Counter({
        name: "accord_events_pruned_total",
        help: "Delivered events removed once older than the retention (--events-retention-days).",
        registers
      })
      return {
        settled: (sink, status, recordedAt, now) => {
          attempts.inc({ sink, status })
          if (status === "delivered")
            latency.observe({ sink }, Math.max(0, now.getTime() - recordedAt.getTime()) / 1000)
        },
        running: (sink, isRunning) => running.set({ sink }, isRunning ? 1 : 0),
        restarted: (sink) => restarts.inc({ sink }),
        disabled: (sink) => disabled.set({ sink }, 1),
        natsConnected: (connected) => natsConnected?.set(connected ? 1 : 0),
        pruned: (count) => pruned.inc(count)
      }
    }
  }
}

type Hooks = Pick<StandaloneServerOptions, "onRequest" | "onResponse" | "onClientError" | "onDeprecatedCall">

/** `hooks` (the logger's) with the metrics' hooks called first: both keep working. */
export const withMetrics = <H extends Hooks>(hooks: H, metrics: MetricsHooks): H & MetricsHooks => {
  const { onRequest, onResponse, onClientError, onDeprecatedCall } = hooks
  return {
    ...hooks,
    onDeprecatedCall:
      onDeprecatedCall === undefined
        ? metrics.onDeprecatedCall
        : (call: DeprecatedCall) => {
            metrics.onDeprecatedCall(call)
            onDeprecatedCall(call)
          },
    onRequest:
      onRequest === undefined
        ? metrics.onRequest
        : () => {
            metrics.onRequest()
            onRequest()
          },
    onResponse:
      onResponse === undefined
        ? metrics.onResponse
        : (log: RequestLog) => {
            metrics.onResponse(log)
            onResponse(log)
          },
    onClientError:
      onClientError === undefined
        ? metrics.onClientError
        : (log: ClientErrorLog) => {
            metrics.onClientError(log)
            onClientError(log)
          }
  }
}

let workerRegistry: Registry | undefined

/**
 * The registry of a cluster worker, one a process: the primary's `serveClusterMetrics` asks each worker for it over
 * IPC. Making an AggregatorRegistry is what installs a worker's IPC listener (prom-client 15).
 */
export const clusterWorkerRegistry = (): Registry => {
  if (workerRegistry === undefined) {
    workerRegistry = new AggregatorRegistry<PrometheusContentType>()
    AggregatorRegistry.setRegistries(workerRegistry)
  }
  return workerRegistry
}

export interface MetricsListener {
  /** `http://HOST:PORT` with the actual port; metrics are at `${url}/metrics`. */
  readonly url: string
  readonly close: () => Promise<void>
}

export interface MetricsListenOptions {
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
}

const PLAIN_TEXT = "text/plain; charset=utf-8"
const COMMON_HEADERS = { "cache-control": "no-store", "x-content-type-options": "nosniff" } as const

/**
 * A listener of its own for GET (or HEAD) /metrics, 404 for anything else; a failed scrape (a cluster worker that
 * does not answer) is a 503. It never sees the service's requests, and the service never sees it.
 */
const serve = async (
  scrape: () => Promise<string>,
  contentType: string,
  { host, port }: MetricsListenOptions
): Promise<MetricsListener> => {
  const server = createServer({ requestTimeout: 10_000, headersTimeout: 5_000 }, (request, response) => {
    const path = (request.url ?? "").split("?", 1)[0]
    if (path !== "/metrics" || (request.method !== "GET" && request.method !== "HEAD")) {
      response.writeHead(404, { ...COMMON_HEADERS, "content-type": PLAIN_TEXT })
      response.end("Not Found\n")
      return
    }
    scrape().then(
      (body) => {
        response.writeHead(200, {
          ...COMMON_HEADERS,
          "content-type": contentType,
          "content-length": Buffer.byteLength(body)
        })
        response.end(body)
      },
      () => {
        response.writeHead(503, { ...COMMON_HEADERS, "content-type": PLAIN_TEXT })
        response.end("metrics unavailable\n")
      }
    )
  })
  const url = await listen(server, host, port)
  let closing: Promise<void> | undefined
  const close = () =>
    (closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve())
      // A scraper keeps its connection alive between scrapes; nothing on it is worth waiting for.
      server.closeAllConnections()
    }))
  return { url, close }
}

/** Serves `registry` (a single process's metrics). */
export const serveMetrics = (registry: Registry, options: MetricsListenOptions): Promise<MetricsListener> =>
  serve(() => registry.metrics(), registry.contentType, options)

/**
 * For a cluster's primary: serves the sum of its workers' metrics (prom-client's AggregatorRegistry; counters and
 * gauges add up, process metrics per their own rule). Each worker runs `startAccord` with the same metrics option and
 * keeps its metrics in `clusterWorkerRegistry()`. A worker that does not answer within 5 s makes the scrape a 503.
 */
export const serveClusterMetrics = (options: MetricsListenOptions): Promise<MetricsListener> => {
  const aggregator = new AggregatorRegistry<PrometheusContentType>()
  return serve(() => aggregator.clusterMetrics(), aggregator.contentType, options)
}
