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
import { clientErrorLogging, connectionLogging, createLogger, requestLogging } from "./logger.js"
import { readSeedFile } from "./seed-file.js"

/** The store, the server or the network refused to start (exit code 1; config and seed problems are ConfigError). */
export class StartError extends Error {
  override readonly name = "StartError"
  readonly exitCode = 1
}

export interface StartOptions {
  /** Where logs go; default: JSON lines on stderr at `config.logLevel`. */
  readonly logger?: Logger
}

/** A running service. `close()` drains in-flight requests, then closes the store; calling it again is harmless. */
export interface RunningAccord {
  /** `http://HOST:PORT` with the actual port. */
  readonly url: string
  readonly close: () => Promise<void>
}

const servers: Record<AccordConfig["adapter"], (options: StandaloneServerOptions) => Promise<RunningServer>> = {
  fastify: startFastifyServer,
  koa: startKoaServer,
  express: startExpressServer,
  fetch: startFetchServer
}

const storeLayer = (config: AccordConfig): Layer.Layer<StoreServices, unknown> => {
  if (config.store === "memory") return MemoryStoreLive
  if (config.databaseUrl === undefined) throw new StartError("--store postgres needs --database-url (DATABASE_URL)")
  return PostgresStoreLive({
    connectionString: Redacted.value(config.databaseUrl),
    ...(config.databaseSchema !== undefined && { schema: config.databaseSchema })
  })
}

/** The store, with its Authenticator replaced by the JWT one under --auth jwt (the later layer of a merge wins). */
const authenticatedStoreLayer = (config: AccordConfig): Layer.Layer<StoreServices, unknown> =>
  config.jwt === undefined ? storeLayer(config) : Layer.merge(storeLayer(config), JwtAuthenticatorLive(config.jwt))

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

  const services = Layer.merge(
    authenticatedStoreLayer(config),
    ScryptPasswordHasherLive({ ...config.scrypt, ...config.hashing })
  )
  // Traced only when an OTLP endpoint is configured; otherwise no tracer, no span wrapper, no per-request cost, and
  // OpenTelemetry's modules are never loaded.
  const tracing = config.tracing === undefined ? undefined : (await import("./tracing.js")).makeTracing(config.tracing)
  const runtime = ManagedRuntime.make(
    tracing === undefined ? services : Layer.merge(withPortSpans(services), tracing.layer)
  )
  let server: RunningServer
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
    server = await servers[config.adapter]({
      runtime,
      host: config.host,
      port: config.port,
      bodyLimit: config.bodyLimit,
      maxHeaderSize: config.maxHeaderSize,
      maxPathLength: config.maxPathLength,
      requestTimeoutMs: config.requestTimeoutMs,
      headersTimeoutMs: config.headersTimeoutMs,
      ...(config.rateLimit !== undefined && { rateLimit: config.rateLimit }),
      drainTimeoutMs: config.drainTimeoutMs,
      maxConnections: config.maxConnections,
      docs: loadApiReference(),
      ...(tracing !== undefined && { tracing: tracing.http }),
      ...requestLogging(logger),
      ...connectionLogging(logger),
      ...clientErrorLogging(logger)
    }).catch((error: unknown) => {
      throw new StartError(`cannot listen on ${config.host}:${config.port}: ${describe(error)}`)
    })
  } catch (error) {
    await runtime.dispose()
    await tracing?.shutdown()
    throw error
  }
  logger.info(
    {
      adapter: config.adapter,
      store: config.store,
      auth: config.auth,
      tracing: tracing !== undefined,
      url: server.url,
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
        await runtime.dispose()
        // After the drain: the spans of the last requests are exported before the process exits.
        await tracing?.shutdown()
      }
      logger.info("stopped")
    })())
  return { url: server.url, close }
}
