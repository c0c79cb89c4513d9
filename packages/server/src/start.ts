import cluster from "node:cluster"
import { Cause, Effect, Exit, Layer, ManagedRuntime, Redacted } from "effect"
import type { Logger } from "pino"
import { EventStore, type Seed, StoreAdmin, type StoreServices, Unavailable, withPortSpans } from "@accord/domain"
import type { AccordRuntime } from "@accord/core"
import { productionScryptCost, ScryptPasswordHasherLive } from "@accord/node/scrypt"
import type { RunningServer, StandaloneServerOptions } from "@accord/node/server"
import { loadApiReference } from "@accord/api-reference"
import { JwtAuthenticatorLive } from "@accord/auth-jwt"
import { MemoryStoreLive } from "@accord/store-memory"
import type { DataDirInUse, DataDirRefused } from "@accord/store-postgres"
import { ConfigError, type AccordConfig } from "./config.js"
import type { ClosableRateLimiter } from "@accord/rate-limit"
import { connectionLogging, createLogger } from "./logger.js"
import { requestLogging } from "./request-line.js"
import { deprecatedCallLogging, storeFullLogging } from "./throttled-log.js"
import type { RunningRelay } from "./events.js"
import type { AccordMetrics, MetricsListener } from "./metrics.js"
import { makeServerRateLimiter } from "./rate-limiter.js"
import { readSeedFile } from "./seed-file.js"

/** The store, the server or the network refused to start (exit code 1; config and seed problems are ConfigError). */
export class StartError extends Error {
  override readonly name = "StartError"
  readonly exitCode = 1
}

export interface StartOptions {
  /** Where logs go; default: JSON lines on stderr at `config.logLevel`. */
  readonly logger?: Logger
  /**
   * Running as one of an Accord cluster's workers (`--workers` above 1), default false: the memory rate limit is then kept by the
   * primary and shared by every worker (the primary calls `startClusterRateLimitPrimary()` before forking), and the
   * metrics are the primary's to serve (`serveClusterMetrics`).
   */
  readonly clustered?: boolean
}

/**
 * A running service. `close()` drains in-flight requests, then closes the rate limit's store and the store; calling
 * it again is harmless.
 */
export interface RunningAccord {
  /** `http://HOST:PORT` with the actual port. */
  readonly url: string
  /** The metrics listener's `http://HOST:PORT` (scrape `/metrics`); absent when metrics are off or in a cluster worker. */
  readonly metricsUrl?: string
  readonly close: () => Promise<void>
}

/**
 * Each adapter is loaded when chosen, as the PostgreSQL store, metrics and the rate limit are: a process loads one web
 * framework and the drivers it uses, not all of them (with Fastify and the memory store, 116 MB resident instead of
 * 140, and a faster start).
 */
const servers: Record<
  AccordConfig["adapter"],
  () => Promise<(options: StandaloneServerOptions) => Promise<RunningServer>>
> = {
  fastify: async () => (await import("@accord/adapter-fastify")).startFastifyServer,
  koa: async () => (await import("@accord/adapter-koa")).startKoaServer,
  express: async () => (await import("@accord/adapter-express")).startExpressServer,
  fetch: async () => (await import("@accord/adapter-fetch/node")).startFetchServer
}

const storeLayer = async (
  config: AccordConfig,
  metrics: AccordMetrics | undefined,
  logger: Logger
): Promise<Layer.Layer<StoreServices, unknown>> => {
  // A full disk answers 503, logged here at most once per interval (docs/operations.md, "The PGlite store").
  const onStoreFull = storeFullLogging(logger, describe)
  // A stored event this version cannot read is skipped; its id and why, never its values (docs/operations.md, "Events").
  const onUnreadableEvent = (id: string, why: string) =>
    logger.warn({ event: id, why }, "an event this version cannot read is skipped")
  if (config.store === "memory") return MemoryStoreLive
  if (config.store === "pglite") {
    if (config.dataDir === undefined) throw new StartError("--store pglite needs --data-dir (DATA_DIR)")
    const { PgliteStoreLive } = await import("@accord/store-postgres")
    return PgliteStoreLive({
      dataDir: config.dataDir,
      onStoreFull,
      // Otherwise silent for many seconds (tens on a busy machine) before the listening line.
      onInitialise: (dataDir) =>
        logger.info(
          { dataDir },
          "initialising a new PGlite database in the data directory; the first start takes a while"
        ),
      onUnreadableEvent,
      credentialCacheTtlMs: config.credentialCacheTtlMs
    })
  }
  if (config.databaseUrl === undefined) throw new StartError("--store postgres needs --database-url (DATABASE_URL)")
  const { PostgresStoreLive } = await import("@accord/store-postgres")
  return PostgresStoreLive({
    connectionString: Redacted.value(config.databaseUrl),
    queryTimeoutMs: config.databaseQueryTimeoutMs,
    credentialCacheTtlMs: config.credentialCacheTtlMs,
    onStoreFull,
    onUnreadableEvent,
    ...(config.databaseSchema !== undefined && { schema: config.databaseSchema }),
    ...(metrics !== undefined && { observePool: metrics.observePool })
  })
}

/** The store, with its Authenticator replaced by the JWT one under --auth jwt (the later layer of a merge wins). */
const authenticatedStoreLayer = async (
  config: AccordConfig,
  metrics: AccordMetrics | undefined,
  logger: Logger
): Promise<Layer.Layer<StoreServices, unknown>> => {
  const store = await storeLayer(config, metrics, logger)
  return config.jwt === undefined ? store : Layer.merge(store, JwtAuthenticatorLive(config.jwt))
}

/**
 * A failure's own message, without a stack, following causes to the driver's words ("connect ECONNREFUSED ...").
 * Driver errors never carry the connection string's password.
 */
const describe = (failure: unknown, depth = 0): string => {
  const error = Cause.isCause(failure) ? Cause.squash(failure) : failure
  if (depth > 4) return "unknown cause"
  if (error instanceof Unavailable) {
    const reason = error.reason.replaceAll("_", " ")
    return error.cause === undefined ? reason : `${reason}: ${describe(error.cause, depth + 1)}`
  }
  if (error instanceof AggregateError && error.message === "" && error.errors.length > 0) {
    return describe(error.errors[0], depth + 1)
  }
  if (error instanceof Error) {
    if (error.message === "" && error.cause !== undefined) return describe(error.cause, depth + 1)
    const code =
      "code" in error && typeof error.code === "string" && !error.message.includes(error.code) ? ` (${error.code})` : ""
    return `${error.message === "" ? error.name : error.message}${code}`
  }
  return String(error)
}

/** The event relay when a sink is configured (docs/operations.md, "Events"); loaded only then. */
const startRelay = async (
  config: AccordConfig,
  runtime: AccordRuntime,
  logger: Logger,
  metrics: AccordMetrics | undefined
): Promise<RunningRelay | undefined> => {
  if (config.webhookUrl === undefined && config.eventsNatsUrl === undefined) return undefined
  const { startEventRelay } = await import("./events.js")
  const keys = config.webhookSecret === undefined ? [] : Redacted.value(config.webhookSecret)
  // Each sink is named at start by its endpoint (scheme, host, path) beside the digest its lines carry; never the
  // URL's userinfo or query, nor the secret.
  return startEventRelay(
    runtime,
    {
      webhookUrls: config.webhookUrl ?? [],
      webhookKeys: keys,
      webhookConnectTimeoutMs: config.webhookConnectTimeoutMs,
      webhookTimeoutMs: config.webhookTimeoutMs,
      natsUrl: config.eventsNatsUrl,
      retryForMs: config.eventsRetryForS * 1000,
      backoffMs: config.eventsBackoffMs,
      pollMs: config.eventsPollMs,
      retentionDays: config.eventsRetentionDays
    },
    { ...(metrics !== undefined && { metrics }), logger, describe }
  ).catch((error: unknown) => {
    throw error instanceof ConfigError ? error : new StartError(`cannot start the event relay: ${describe(error)}`)
  })
}

/**
 * The memory store's events end with the process: when a relay ran, how many were not delivered is logged as it
 * stops (they are lost; a SQL store keeps them for the next start).
 */
const logUndeliveredMemoryEvents = async (runtime: AccordRuntime, logger: Logger): Promise<void> => {
  const counts = await runtime
    .runPromise(Effect.flatMap(EventStore, (events) => events.countByStatus))
    .catch(() => undefined)
  if (counts === undefined || counts.pending + counts.failed === 0) return
  logger.warn(
    { pending: counts.pending, failed: counts.failed },
    "the memory store stops with events not delivered; they are lost"
  )
}

/** What closing the stores gets at least, even after a drain that used its whole limit. */
const RELEASE_AT_LEAST_MS = 1000

/** Whether `promise` settled within `ms` (its rejection passes through); it is not waited for beyond that. */
const settlesWithin = (promise: Promise<void>, ms: number): Promise<boolean> => {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms)
  })
  return Promise.race([promise.then(() => true), late]).finally(() => clearTimeout(timer))
}

/** A data directory another process holds, or that this one must not take: the operator's to sort out. */
const isDataDirRefusal = (failure: unknown): failure is DataDirInUse | DataDirRefused =>
  failure instanceof Error &&
  "_tag" in failure &&
  (failure._tag === "DataDirInUse" || failure._tag === "DataDirRefused")

const runOrThrow = async <A, E>(
  runtime: AccordRuntime,
  effect: Effect.Effect<A, E, StoreServices>,
  what: string
): Promise<A> => {
  const exit = await runtime.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  // Another process owns the PGlite directory, or it is not one to take (another user's, not a database): the
  // operator's to sort out, like a bad option (exit 2).
  const failure = Cause.squash(exit.cause)
  // By its tag: the store's package is loaded only when chosen (see `servers`).
  if (isDataDirRefusal(failure)) throw new ConfigError(failure.message)
  throw new StartError(`${what}: ${describe(exit.cause)}`)
}

/**
 * Reads the seed file, builds the store (a postgres or pglite store migrates as it starts), loads the seed, and starts the
 * chosen adapter. Throws ConfigError (a bad seed file) or StartError; whatever it built is released on failure.
 */
export const startAccord = async (config: AccordConfig, options: StartOptions = {}): Promise<RunningAccord> => {
  const logger = options.logger ?? createLogger(config.logLevel)
  // Read before anything is built: a bad seed file stops the start without touching the store.
  const seed: Seed | undefined = config.seedFile === undefined ? undefined : await readSeedFile(config.seedFile)

  if (
    config.scrypt.N < productionScryptCost.N ||
    config.scrypt.r < productionScryptCost.r ||
    config.scrypt.p < productionScryptCost.p
  ) {
    logger.warn({ scrypt: config.scrypt }, "scrypt cost is below the production default (N=32768, r=8, p=3)")
  }

  const clustered = options.clustered ?? false
  // A cluster worker keeps its metrics for the primary to collect (serveClusterMetrics); the primary listens.
  const metering =
    config.metrics === undefined
      ? undefined
      : await import("./metrics.js").then((module) => ({
          module,
          metrics: module.createMetrics(clustered ? module.clusterWorkerRegistry() : undefined)
        }))
  const metrics = metering?.metrics
  const services = Layer.merge(
    await authenticatedStoreLayer(config, metrics, logger),
    ScryptPasswordHasherLive({
      ...config.scrypt,
      ...config.hashing,
      ...(metrics !== undefined && { observeLoad: metrics.observeHashing })
    })
  )
  // Traced only when an OTLP endpoint is configured; otherwise no tracer, no span wrapper, no per-request cost, and
  // OpenTelemetry's modules are never loaded.
  const tracing = config.tracing === undefined ? undefined : (await import("./tracing.js")).makeTracing(config.tracing)
  const runtime = ManagedRuntime.make(
    tracing === undefined ? services : Layer.merge(withPortSpans(services), tracing.layer)
  )
  // Off, the server gets the logger's hooks alone: metrics cost nothing then.
  const logging = {
    ...requestLogging(logger, { logRequests: config.logRequests }),
    onDeprecatedCall: deprecatedCallLogging(logger)
  }
  const hooks = metering === undefined ? logging : metering.module.withMetrics(logging, metering.metrics)
  let server: RunningServer
  let metricsListener: MetricsListener | undefined
  let rateLimit: ClosableRateLimiter | undefined
  let credentials: number | undefined
  let relay: RunningRelay | undefined
  /**
   * What the server used, released once it has stopped (or failed to start). Metrics stay up while the service
   * drains, so the drain itself can be watched; the spans of the last requests are exported last.
   */
  const release = async (): Promise<void> => {
    await relay?.close()
    if (relay !== undefined && config.store === "memory") await logUndeliveredMemoryEvents(runtime, logger)
    await rateLimit?.close()
    await Promise.all([runtime.dispose(), metricsListener?.close()])
    await tracing?.shutdown()
  }
  try {
    // The first run builds the layer: an unreachable database fails here, before the port is taken.
    await runOrThrow(
      runtime,
      Effect.flatMap(StoreAdmin, (admin) => admin.ping),
      `cannot start the ${config.store} store`
    )
    if (seed !== undefined) {
      const report = await runOrThrow(
        runtime,
        Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(seed)),
        "cannot load the seed"
      )
      logger.info({ seedFile: config.seedFile, ...report }, "seed loaded")
    }
    // Every store, after its seed: with none of its tokens, every call but health and the docs is 401 (below).
    if (config.auth === "store" && (!clustered || cluster.worker?.id === 1)) {
      credentials = await runOrThrow(
        runtime,
        Effect.flatMap(StoreAdmin, (admin) => admin.countCredentials),
        `cannot read the ${config.store} store`
      )
    }
    // After the store: a PostgreSQL limit's table goes into the schema the store's migrations created.
    rateLimit = await makeServerRateLimiter(config, { clustered, logger, describe }).catch((error: unknown) => {
      throw new StartError(`cannot start the ${config.rateLimit?.store} rate limit: ${describe(error)}`)
    })
    if (rateLimit?.stats !== undefined) metrics?.observeRateLimit(rateLimit.stats)
    // Before the service's port, so that a taken metrics port stops the start before any client is answered.
    if (metering !== undefined && config.metrics !== undefined && !clustered) {
      const { host, port } = config.metrics
      metricsListener = await metering.module
        .serveMetrics(metering.metrics.registry, config.metrics)
        .catch((error: unknown) => {
          throw new StartError(`cannot listen for metrics on ${host}:${port}: ${describe(error)}`)
        })
    }
    const startServer = await servers[config.adapter]()
    server = await startServer({
      runtime,
      host: config.host,
      port: config.port,
      bodyLimit: config.bodyLimit,
      maxHeaderSize: config.maxHeaderSize,
      maxPathLength: config.maxPathLength,
      requestTimeoutMs: config.requestTimeoutMs,
      headersTimeoutMs: config.headersTimeoutMs,
      ...(rateLimit !== undefined && { rateLimit }),
      ...(config.corsOrigin !== undefined && { corsOrigins: config.corsOrigin }),
      requireIfMatch: config.requireIfMatch,
      ...((config.aliasDeprecation !== undefined || config.aliasSunset !== undefined) && {
        aliasDates: {
          ...(config.aliasDeprecation !== undefined && { deprecatedAt: config.aliasDeprecation }),
          ...(config.aliasSunset !== undefined && { sunsetAt: config.aliasSunset })
        }
      }),
      drainTimeoutMs: config.drainTimeoutMs,
      maxConnections: config.maxConnections,
      eventStreams: {
        heartbeatMs: config.eventsStreamHeartbeatSeconds * 1000,
        perCredential: config.eventsStreamsPerCredential,
        total: config.eventsStreamsMax,
        ...metering?.metrics.eventStreams
      },
      docs: loadApiReference(),
      ...(tracing !== undefined && { tracing: tracing.http }),
      ...hooks,
      ...connectionLogging(logger)
    }).catch((error: unknown) => {
      throw new StartError(`cannot listen on ${config.host}:${config.port}: ${describe(error)}`)
    })
    // After the port: the relay delivers beside the requests, and a receiver that is down delays only its events.
    relay = await startRelay(config, runtime, logger, metrics)
  } catch (error) {
    await release()
    throw error
  }
  logger.info(
    {
      adapter: config.adapter,
      store: config.store,
      ...(config.dataDir !== undefined && { dataDir: config.dataDir }),
      auth: config.auth,
      tracing: tracing !== undefined,
      url: server.url,
      ...(metricsListener !== undefined && { metricsUrl: metricsListener.url }),
      node: process.version
    },
    "listening"
  )
  if (credentials === 0) {
    // A first `npm start`, or a new database without a seed: every call but health and the docs is 401 until tokens
    // exist. Once per start: a cluster's first worker alone counts.
    logger.warn(
      "the store is empty: no user or client can authenticate; load some with --seed FILE (SEED_FILE), e.g. --seed seed.json"
    )
  }

  let closing: Promise<void> | undefined
  const close = () =>
    (closing ??= (async () => {
      // The drain limit bounds the whole shutdown, whatever the stores do (docs/operations.md, "Stopping"): what is
      // left of it after the drain, at least RELEASE_AT_LEAST_MS, goes to releasing them.
      const deadline = performance.now() + config.drainTimeoutMs
      try {
        await server.close()
      } finally {
        const left = Math.max(RELEASE_AT_LEAST_MS, deadline - performance.now())
        if (!(await settlesWithin(release(), left))) {
          logger.warn({ waitedMs: Math.round(left) }, "the stores did not close in time; stopping without them")
        }
      }
      logger.info("stopped")
    })())
  return { url: server.url, ...(metricsListener !== undefined && { metricsUrl: metricsListener.url }), close }
}
