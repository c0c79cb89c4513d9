import { Cause, Effect, Exit, Layer, ManagedRuntime, Redacted } from "effect"
import type { Logger } from "pino"
import {
  StoreAdmin,
  Unavailable,
  type AccordRuntime,
  type RunningServer,
  type Seed,
  type StandaloneServerOptions,
  type StoreServices,
  withPortSpans
} from "@accord/core"
import { productionScryptCost, ScryptPasswordHasherLive } from "@accord/node"
import { loadApiReference } from "@accord/api-reference"
import { startExpressServer } from "@accord/adapter-express"
import { startFastifyServer } from "@accord/adapter-fastify"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { startKoaServer } from "@accord/adapter-koa"
import { JwtAuthenticatorLive } from "@accord/auth-jwt"
import { MemoryStoreLive } from "@accord/store-memory"
import { PostgresStoreLive } from "@accord/store-postgres"
import type { AccordConfig } from "./config.js"
import type { ClosableRateLimiter } from "@accord/rate-limit"
import { clientErrorLogging, connectionLogging, createLogger, rateLimitErrorLogging, requestLogging } from "./logger.js"
import {
  clusterWorkerRegistry,
  createMetrics,
  serveMetrics,
  withMetrics,
  type AccordMetrics,
  type MetricsListener
} from "./metrics.js"
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

const servers: Record<AccordConfig["adapter"], (options: StandaloneServerOptions) => Promise<RunningServer>> = {
  fastify: startFastifyServer,
  koa: startKoaServer,
  express: startExpressServer,
  fetch: startFetchServer
}

const storeLayer = (config: AccordConfig, metrics: AccordMetrics | undefined): Layer.Layer<StoreServices, unknown> => {
  if (config.store === "memory") return MemoryStoreLive
  if (config.databaseUrl === undefined) throw new StartError("--store postgres needs --database-url (DATABASE_URL)")
  return PostgresStoreLive({
    connectionString: Redacted.value(config.databaseUrl),
    ...(config.databaseSchema !== undefined && { schema: config.databaseSchema }),
    ...(metrics !== undefined && { observePool: metrics.observePool })
  })
}

/** The store, with its Authenticator replaced by the JWT one under --auth jwt (the later layer of a merge wins). */
const authenticatedStoreLayer = (
  config: AccordConfig,
  metrics: AccordMetrics | undefined
): Layer.Layer<StoreServices, unknown> =>
  config.jwt === undefined
    ? storeLayer(config, metrics)
    : Layer.merge(storeLayer(config, metrics), JwtAuthenticatorLive(config.jwt))

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

const runOrThrow = async <A, E>(
  runtime: AccordRuntime,
  effect: Effect.Effect<A, E, StoreServices>,
  what: string
): Promise<A> => {
  const exit = await runtime.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  throw new StartError(`${what}: ${describe(exit.cause)}`)
}

/**
 * Reads the seed file, builds the store (a postgres store migrates as it starts), loads the seed, and starts the
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
  const metrics =
    config.metrics === undefined ? undefined : createMetrics(clustered ? clusterWorkerRegistry() : undefined)
  const services = Layer.merge(
    authenticatedStoreLayer(config, metrics),
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
  const logging = { ...requestLogging(logger), ...clientErrorLogging(logger) }
  const hooks = metrics === undefined ? logging : withMetrics(logging, metrics)
  let server: RunningServer
  let metricsListener: MetricsListener | undefined
  let rateLimit: ClosableRateLimiter | undefined
  /**
   * What the server used, released once it has stopped (or failed to start). Metrics stay up while the service
   * drains, so the drain itself can be watched; the spans of the last requests are exported last.
   */
  const release = async (): Promise<void> => {
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
    // After the store: a PostgreSQL limit's table goes into the schema the store's migrations created.
    rateLimit = await makeServerRateLimiter(config, {
      clustered,
      onError: rateLimitErrorLogging(logger, describe)
    }).catch((error: unknown) => {
      throw new StartError(`cannot start the ${config.rateLimit?.store} rate limit: ${describe(error)}`)
    })
    // Before the service's port, so that a taken metrics port stops the start before any client is answered.
    if (metrics !== undefined && config.metrics !== undefined && !clustered) {
      const { host, port } = config.metrics
      metricsListener = await serveMetrics(metrics.registry, config.metrics).catch((error: unknown) => {
        throw new StartError(`cannot listen for metrics on ${host}:${port}: ${describe(error)}`)
      })
    }
    server = await servers[config.adapter]({
      runtime,
      host: config.host,
      port: config.port,
      bodyLimit: config.bodyLimit,
      maxHeaderSize: config.maxHeaderSize,
      maxPathLength: config.maxPathLength,
      requestTimeoutMs: config.requestTimeoutMs,
      headersTimeoutMs: config.headersTimeoutMs,
      ...(rateLimit !== undefined && { rateLimit }),
      drainTimeoutMs: config.drainTimeoutMs,
      maxConnections: config.maxConnections,
      docs: loadApiReference(),
      ...(tracing !== undefined && { tracing: tracing.http }),
      ...hooks,
      ...connectionLogging(logger)
    }).catch((error: unknown) => {
      throw new StartError(`cannot listen on ${config.host}:${config.port}: ${describe(error)}`)
    })
  } catch (error) {
    await release()
    throw error
  }
  logger.info(
    {
      adapter: config.adapter,
      store: config.store,
      auth: config.auth,
      tracing: tracing !== undefined,
      url: server.url,
      ...(metricsListener !== undefined && { metricsUrl: metricsListener.url }),
      node: process.version
    },
    "listening"
  )

  let closing: Promise<void> | undefined
  const close = () =>
    (closing ??= (async () => {
      try {
        await server.close()
      } finally {
        await release()
      }
      logger.info("stopped")
    })())
  return { url: server.url, ...(metricsListener !== undefined && { metricsUrl: metricsListener.url }), close }
}
