import { ALIAS_DEPRECATED_AT, ALIAS_SUNSET_AT } from "@accord/contract/deprecation"
import { availableParallelism } from "node:os"
import { Result } from "effect"
import { defaultValues, describeOption, parseOptions, type OptionValues } from "@accord/cli-options"
import { jwtConfigFromEnv, type JwtAuthConfig } from "@accord/auth-jwt"
import type { RateLimitOptions } from "@accord/rate-limit"
import { LOG_LEVELS, RATE_LIMIT_STORES, serverOptions, TRACES_SAMPLERS } from "./options.js"

/** A start-up problem the operator must fix (bad flag, bad environment, bad seed file): exit code 2. */
export class ConfigError extends Error {
  override readonly name = "ConfigError"
  readonly exitCode = 2
}

export type LogLevel = (typeof LOG_LEVELS)[number]
export type { LogRequests } from "./options.js"
export type TracesSampler = (typeof TRACES_SAMPLERS)[number]

/**
 * The per-credential rate limit: `capacity` requests per window of capacity / refillPerSecond seconds (whole seconds),
 * counted where `store` says: this process (a cluster's primary when clustered), the store's database, or Redis.
 */
export interface RateLimitConfig extends RateLimitOptions {
  readonly store: (typeof RATE_LIMIT_STORES)[number]
}

/** Traces exported over OTLP/HTTP (docs/operations.md, "Traces"). */
export interface TracingConfig {
  /** Where the exporter POSTs spans: the traces endpoint, or the base endpoint with `/v1/traces`. */
  readonly tracesUrl: string
  /** The resource's `service.name`. */
  readonly serviceName: string
  readonly sampler: TracesSampler
  /** The ratio of a `traceidratio` sampler, 0 to 1. */
  readonly samplerRatio: number
}

export interface ScryptCost {
  readonly N: number
  readonly r: number
  readonly p: number
}

/** The options as the table (options.ts) parses them: one key per option, typed by its entry. */
export type ServerOptionValues = OptionValues<typeof serverOptions>

/** Options the config holds in another shape: grouped, resolved, or checked against others (`toConfig`). */
type ReshapedOption =
  | "headersTimeoutMs"
  | "rateLimitCapacity"
  | "rateLimitRefillPerSecond"
  | "rateLimitStore"
  | "metricsPort"
  | "metricsHost"
  | "workers"
  | "scryptN"
  | "scryptR"
  | "scryptP"
  | "scryptMaxConcurrent"
  | "scryptMaxQueued"
  | "otlpEndpoint"
  | "otlpTracesEndpoint"
  | "otelServiceName"
  | "otelTracesSampler"
  | "otelTracesSamplerArg"
  | "otelTracesExporter"
  | "otelSdkDisabled"

/**
 * Everything the composition root needs, decoded and defaulted: each option of the table under its key (their help
 * is in options.ts), except those reshaped below. `databaseUrl` and `redisUrl` are redacted: they may carry a password.
 */
export interface AccordConfig extends Omit<ServerOptionValues, ReshapedOption> {
  /** Time to receive the headers, at most `requestTimeoutMs` unless that is 0; 0 for none (408 past it). */
  readonly headersTimeoutMs: number
  /** Per-credential rate limit; off when absent (429 past it). */
  readonly rateLimit?: RateLimitConfig
  readonly scrypt: ScryptCost
  /** Hashes computed at once, and hashes allowed to wait; past both, 503 with Retry-After. */
  readonly hashing: { readonly maxConcurrent: number; readonly maxQueued: number }
  /** With `auth: "jwt"`: its settings, from the environment. */
  readonly jwt?: JwtAuthConfig
  /**
   * Prometheus metrics on a listener of their own (GET /metrics); off when absent. Meant for a private network:
   * the host defaults to 127.0.0.1 whatever `host` is (docs/operations.md, "Metrics").
   */
  readonly metrics?: { readonly host: string; readonly port: number }
  /** Processes serving the one port (`node:cluster`); 1: no cluster at all. More than 1 needs the postgres store. */
  readonly workers: number
  /** Absent: no span is made at all (the handler's untraced path). */
  readonly tracing?: TracingConfig
}

export { DEFAULT_METRICS_HOST, TRACES_SAMPLERS, usage } from "./options.js"

export type ParsedCommandLine =
  | { readonly _tag: "Help" }
  | {
      readonly _tag: "Run"
      readonly config: AccordConfig
      /** To log once at start: a password given in a flag (docs/SECURITY.md, item 39). */
      readonly warnings: ReadonlyArray<string>
    }

const named = (key: keyof typeof serverOptions): string => describeOption(serverOptions[key])

/** The options checked against each other and shaped into the config; throws ConfigError naming the options. */
const toConfig = (
  values: ServerOptionValues,
  given: ReadonlySet<keyof typeof serverOptions>,
  env: Readonly<Record<string, string | undefined>>
): AccordConfig => {
  const {
    scryptN,
    scryptR,
    scryptP,
    scryptMaxConcurrent,
    scryptMaxQueued,
    headersTimeoutMs: headersTimeoutValue,
    rateLimitCapacity,
    rateLimitRefillPerSecond,
    rateLimitStore,
    metricsPort,
    metricsHost,
    workers: workersGiven,
    otlpEndpoint,
    otlpTracesEndpoint,
    otelServiceName,
    otelTracesSampler,
    otelTracesSamplerArg,
    otelTracesExporter,
    otelSdkDisabled,
    ...rest
  } = values
  // docs/api.md, "Versioning": the alias's sunset never before its deprecation (RFC 9745), either given or default.
  const aliasDeprecation = rest.aliasDeprecation ?? new Date(ALIAS_DEPRECATED_AT)
  const aliasSunset = rest.aliasSunset ?? new Date(ALIAS_SUNSET_AT)
  if (aliasSunset.getTime() < aliasDeprecation.getTime())
    throw new ConfigError(
      `${named("aliasSunset")} (${aliasSunset.toISOString()}) is before ${named("aliasDeprecation")} (${aliasDeprecation.toISOString()})`
    )
  if (rest.webhookUrl !== undefined && rest.webhookSecret === undefined) {
    throw new ConfigError(`${named("webhookUrl")} needs ${named("webhookSecret")}: every delivery is signed`)
  }
  if (rest.store === "postgres" && rest.databaseUrl === undefined) {
    throw new ConfigError(`${named("databaseUrl")} is required with --store postgres`)
  }
  if (rest.store === "pglite" && rest.dataDir === undefined) {
    throw new ConfigError(`${named("dataDir")} is required with --store pglite: the directory the database is kept in`)
  }
  // Given to another store, a data directory would be a durability the operator believes in and does not have.
  if (rest.store !== "pglite" && rest.dataDir !== undefined) {
    throw new ConfigError(`${named("dataDir")} needs --store pglite: the ${rest.store} store keeps nothing in it`)
  }
  // Node refuses a headers timeout above the request timeout; the default one yields to a shorter request timeout.
  const { requestTimeoutMs } = rest
  const headersTimeoutMs =
    given.has("headersTimeoutMs") || requestTimeoutMs === 0
      ? headersTimeoutValue
      : Math.min(headersTimeoutValue, requestTimeoutMs)
  if (requestTimeoutMs > 0 && headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `${named("headersTimeoutMs")} must not exceed ${named("requestTimeoutMs")} (${headersTimeoutMs} > ${requestTimeoutMs})`
    )
  }
  if ((rateLimitCapacity === undefined) !== (rateLimitRefillPerSecond === undefined)) {
    throw new ConfigError(
      `${named("rateLimitCapacity")} and ${named("rateLimitRefillPerSecond")} go together: give both or neither`
    )
  }
  if (metricsPort === undefined && given.has("metricsHost")) {
    throw new ConfigError(`${named("metricsHost")} needs ${named("metricsPort")}`)
  }
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === rest.port) {
    throw new ConfigError(`${named("metricsPort")} must differ from ${named("port")} (both ${metricsPort})`)
  }
  // A store for a limit that is off would be a setting that silently does nothing.
  if (given.has("rateLimitStore") && rateLimitCapacity === undefined) {
    throw new ConfigError(
      `${named("rateLimitStore")} needs a rate limit: ${named("rateLimitCapacity")} and ${named("rateLimitRefillPerSecond")}`
    )
  }
  if (rateLimitStore === "postgres" && rest.store !== "postgres") {
    throw new ConfigError(
      `${named("rateLimitStore")} postgres needs --store postgres: the limit is kept in the store's database`
    )
  }
  if (rateLimitStore === "redis" && rest.redisUrl === undefined) {
    throw new ConfigError(`${named("redisUrl")} is required with --rate-limit-store redis`)
  }
  const workers = workersGiven === "auto" ? availableParallelism() : workersGiven
  if (workers > 1 && rest.store !== "postgres") {
    const shown = workersGiven === "auto" ? `auto (${workers} cores)` : workersGiven
    const why =
      rest.store === "memory"
        ? "with the memory store each worker would hold its own data"
        : "one process at a time owns a PGlite data directory"
    throw new ConfigError(`${named("workers")} ${shown} needs --store postgres: ${why}`)
  }
  let jwt: JwtAuthConfig | undefined
  if (rest.auth === "jwt") {
    const fromEnv = jwtConfigFromEnv(env)
    if (Result.isFailure(fromEnv)) throw new ConfigError(`${named("auth")} jwt: ${fromEnv.failure.message}`)
    jwt = fromEnv.success
  }
  // The exporter's own rule (OpenTelemetry's OTLP exporter spec): the traces endpoint as given, else the base
  // endpoint with `v1/traces` appended.
  const tracesUrl =
    otlpTracesEndpoint ??
    (otlpEndpoint === undefined ? undefined : `${otlpEndpoint}${otlpEndpoint.endsWith("/") ? "" : "/"}v1/traces`)
  const tracing: TracingConfig | undefined =
    tracesUrl === undefined || otelTracesExporter === "none" || otelSdkDisabled === "true"
      ? undefined
      : { tracesUrl, serviceName: otelServiceName, sampler: otelTracesSampler, samplerRatio: otelTracesSamplerArg }
  return {
    ...rest,
    ...(tracing === undefined ? {} : { tracing }),
    ...(jwt === undefined ? {} : { jwt }),
    ...(rateLimitCapacity !== undefined &&
      rateLimitRefillPerSecond !== undefined && {
        rateLimit: { capacity: rateLimitCapacity, refillPerSecond: rateLimitRefillPerSecond, store: rateLimitStore }
      }),
    ...(metricsPort !== undefined && { metrics: { host: metricsHost, port: metricsPort } }),
    headersTimeoutMs,
    workers,
    scrypt: { N: scryptN, r: scryptR, p: scryptP },
    hashing: { maxConcurrent: scryptMaxConcurrent, maxQueued: scryptMaxQueued }
  }
}

/**
 * Reads flags and environment through the option table (options.ts: a flag wins; an empty environment variable
 * counts as unset) into a decoded config. Throws ConfigError naming every bad option.
 */
export const parseConfig = (
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>
): ParsedCommandLine => {
  const parsed = parseOptions(serverOptions, argv, env)
  if (Result.isFailure(parsed)) {
    const { _tag, message } = parsed.failure
    throw new ConfigError(_tag === "CommandLineError" ? `${message}\nRun with --help for usage.` : message)
  }
  if (parsed.success._tag === "Help") return { _tag: "Help" }
  const { values, given, warnings } = parsed.success
  return { _tag: "Run", config: toConfig(values, given, env), warnings }
}

/** The config with every option left out: each default comes from the option table, where it is written once. */
export const defaultConfig: AccordConfig = toConfig(defaultValues(serverOptions), new Set(), {})
