import { availableParallelism } from "node:os"
import { parseArgs } from "node:util"
import { Effect, Redacted, Result, Schema, SchemaIssue, SchemaTransformation } from "effect"
import { DEFAULT_MAX_PATH_LENGTH } from "@accord/core"
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_HEADER_SIZE,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SCRYPT_MAX_CONCURRENT,
  DEFAULT_SCRYPT_MAX_QUEUED,
  productionScryptCost
} from "@accord/node"
import { jwtConfigFromEnv, type JwtAuthConfig } from "@accord/auth-jwt"
import type { RateLimitOptions } from "@accord/rate-limit"

/** A start-up problem the operator must fix (bad flag, bad environment, bad seed file): exit code 2. */
export class ConfigError extends Error {
  override readonly name = "ConfigError"
  readonly exitCode = 2
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const RATE_LIMIT_STORES = ["memory", "postgres", "redis"] as const

/**
 * The per-credential rate limit: `capacity` requests per window of capacity / refillPerSecond seconds (whole seconds),
 * counted where `store` says: this process (a cluster's primary when clustered), the store's database, or Redis.
 */
export interface RateLimitConfig extends RateLimitOptions {
  readonly store: (typeof RATE_LIMIT_STORES)[number]
}

/** The samplers OpenTelemetry's `OTEL_TRACES_SAMPLER` names that the SDK implements. */
export const TRACES_SAMPLERS = [
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
  "always_on",
  "always_off",
  "traceidratio"
] as const
export type TracesSampler = (typeof TRACES_SAMPLERS)[number]

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

/** Everything the composition root needs, decoded and defaulted. */
export interface AccordConfig {
  readonly adapter: "koa" | "fastify" | "express" | "fetch"
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  readonly store: "memory" | "postgres"
  /** Required when `store` is `postgres`; redacted because it usually carries a password. */
  readonly databaseUrl?: Redacted.Redacted<string>
  /** PostgreSQL schema to keep the tables in (created when missing); default: the connection's search_path. */
  readonly databaseSchema?: string
  /** Path of a seed file, relative to the working directory. */
  readonly seedFile?: string
  readonly drainTimeoutMs: number
  readonly bodyLimit: number
  /** Request line plus headers, in bytes (431 past it). */
  readonly maxHeaderSize: number
  /** Longest request path in characters, query excluded (414 past it). */
  readonly maxPathLength: number
  /** Time to receive a whole request, 0 for none (408 past it). */
  readonly requestTimeoutMs: number
  /** Time to receive the headers, at most `requestTimeoutMs` unless that is 0; 0 for none (408 past it). */
  readonly headersTimeoutMs: number
  /** Per-credential rate limit; off when absent (429 past it). */
  readonly rateLimit?: RateLimitConfig
  /** Required when the rate limit is kept in Redis; redacted because it may carry a password. */
  readonly redisUrl?: Redacted.Redacted<string>
  /** Connections open at once, 0 for no cap; past it a new connection is closed at once. */
  readonly maxConnections: number
  readonly logLevel: LogLevel
  readonly scrypt: ScryptCost
  /** Hashes computed at once, and hashes allowed to wait; past both, 503 with Retry-After. */
  readonly hashing: { readonly maxConcurrent: number; readonly maxQueued: number }
  /** Who checks credentials: the store's seeded tokens, or JWTs (then `jwt` holds their settings). */
  readonly auth: "store" | "jwt"
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

export const defaultConfig: AccordConfig = {
  adapter: "fastify",
  host: "127.0.0.1",
  port: 3000,
  store: "memory",
  drainTimeoutMs: 10_000,
  bodyLimit: 16_384,
  maxHeaderSize: DEFAULT_MAX_HEADER_SIZE,
  maxPathLength: DEFAULT_MAX_PATH_LENGTH,
  requestTimeoutMs: DEFAULT_REQUEST_TIMEOUT_MS,
  headersTimeoutMs: DEFAULT_HEADERS_TIMEOUT_MS,
  maxConnections: 0,
  logLevel: "info",
  scrypt: productionScryptCost,
  hashing: { maxConcurrent: DEFAULT_SCRYPT_MAX_CONCURRENT, maxQueued: DEFAULT_SCRYPT_MAX_QUEUED },
  auth: "store",
  workers: 1
}

/** Where metrics listen unless told: loopback only, since they are for operators, not clients. */
export const DEFAULT_METRICS_HOST = "127.0.0.1"

export const usage = `Usage: accord [options]

Runs the Accord HTTP service. Every option can also be set through the environment variable in brackets;
a flag wins over the environment.

  --adapter koa|fastify|express|fetch  HTTP adapter (ADAPTER, default fastify)
  --host HOST                address to listen on (HOST, default 127.0.0.1)
  --port PORT                port, 0 picks a free one (PORT, default 3000)
  --store memory|postgres    store (STORE, default memory)
  --database-url URL         postgres:// connection string, required with --store postgres (DATABASE_URL)
  --database-schema NAME     PostgreSQL schema for the tables, created when missing (DATABASE_SCHEMA,
                             default: the connection's search_path, usually public)
  --seed FILE                JSON seed file loaded at start (SEED_FILE)
  --drain-timeout-ms MS      how long shutdown lets accepted requests finish (DRAIN_TIMEOUT_MS, default 10000)
  --body-limit BYTES         request body limit (BODY_LIMIT, default 16384)
  --max-header-size BYTES    request line plus headers (MAX_HEADER_SIZE, default 16384)
  --max-path-length CHARS    longest request path, query excluded (MAX_PATH_LENGTH, default 2048)
  --request-timeout-ms MS    time to receive a whole request, 0 for none (REQUEST_TIMEOUT_MS, default 30000)
  --headers-timeout-ms MS    time to receive the headers, 0 for none (HEADERS_TIMEOUT_MS, default 10000,
                             at most the request timeout)
  --max-connections N        connections open at once, 0 for no cap; keep it below the file descriptor limit
                             (MAX_CONNECTIONS, default 0)
  --rate-limit-capacity N    per-credential rate limit: N requests per window of N / R seconds, rounded up
                             to whole seconds (RATE_LIMIT_CAPACITY, default off)
  --rate-limit-refill-per-second R
                             the sustained rate, required with a capacity (RATE_LIMIT_REFILL_PER_SECOND)
  --rate-limit-store memory|postgres|redis
                             where the limit is counted: this process (a cluster's workers share their
                             primary's), the store's database (needs --store postgres) or Redis
                             (RATE_LIMIT_STORE, default memory); when it fails, requests are served
  --redis-url URL            redis:// or rediss:// URL, required with --rate-limit-store redis (REDIS_URL)
  --log-level LEVEL          fatal|error|warn|info|debug|trace|silent (LOG_LEVEL, default info)
  --auth store|jwt           who checks tokens: the store's seeded ones, or JWTs (AUTH, default store)
  --metrics-port PORT        serve Prometheus metrics at GET /metrics on this port, 0 picks a free one
                             (METRICS_PORT, default off)
  --metrics-host HOST        address of the metrics listener (METRICS_HOST, default 127.0.0.1 whatever --host
                             is); metrics are for a private network, never expose them to clients
  --workers N|auto           processes serving the port, auto: one per core; more than 1 needs --store postgres
                             (WORKERS, default 1)
  -h, --help                 print this help and exit

  Password hashing cost, environment only: SCRYPT_N (default 32768), SCRYPT_R (default 8), SCRYPT_P (default 3);
  hashes at once SCRYPT_MAX_CONCURRENT (default 4) and waiting SCRYPT_MAX_QUEUED (default 64), then 503.
  JWT settings with --auth jwt, environment only: JWT_SECRET or JWKS_URL (exactly one), JWT_ISSUER, JWT_AUDIENCE,
  and optionally JWT_ALGORITHMS, JWT_CLIENT_CLAIM, JWT_CLIENT_SCOPE, JWT_CLOCK_TOLERANCE_S (default 5).
  Traces, environment only, off unless an endpoint is set: OTEL_EXPORTER_OTLP_ENDPOINT (spans go to its /v1/traces)
  or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_SERVICE_NAME (default accord), OTEL_TRACES_SAMPLER (default
  parentbased_always_on) and OTEL_TRACES_SAMPLER_ARG, OTEL_EXPORTER_OTLP_HEADERS; OTEL_SDK_DISABLED=true or
  OTEL_TRACES_EXPORTER=none turns them off.

Once listening, prints one line to stdout: "listening on http://HOST:PORT". Logs are JSON lines on stderr.
SIGTERM or SIGINT drains in-flight requests, closes the store and exits 0. Exit code 2: bad options or seed file.
With --workers above 1, a primary process runs that many workers on the one port, prints the line once, replaces a
worker that dies, and forwards SIGTERM/SIGINT to every worker; a worker that cannot start stops it with its code.
`

interface OptionSpec {
  readonly flag?: string
  readonly env: string
  /** Never echoed in an error message. */
  readonly secret?: boolean
}

/** Each option: its flag (none: environment only) and its environment variable. */
const options = {
  adapter: { flag: "adapter", env: "ADAPTER" },
  host: { flag: "host", env: "HOST" },
  port: { flag: "port", env: "PORT" },
  store: { flag: "store", env: "STORE" },
  databaseUrl: { flag: "database-url", env: "DATABASE_URL", secret: true },
  databaseSchema: { flag: "database-schema", env: "DATABASE_SCHEMA" },
  seedFile: { flag: "seed", env: "SEED_FILE" },
  drainTimeoutMs: { flag: "drain-timeout-ms", env: "DRAIN_TIMEOUT_MS" },
  bodyLimit: { flag: "body-limit", env: "BODY_LIMIT" },
  maxHeaderSize: { flag: "max-header-size", env: "MAX_HEADER_SIZE" },
  maxPathLength: { flag: "max-path-length", env: "MAX_PATH_LENGTH" },
  requestTimeoutMs: { flag: "request-timeout-ms", env: "REQUEST_TIMEOUT_MS" },
  headersTimeoutMs: { flag: "headers-timeout-ms", env: "HEADERS_TIMEOUT_MS" },
  maxConnections: { flag: "max-connections", env: "MAX_CONNECTIONS" },
  rateLimitCapacity: { flag: "rate-limit-capacity", env: "RATE_LIMIT_CAPACITY" },
  rateLimitRefillPerSecond: { flag: "rate-limit-refill-per-second", env: "RATE_LIMIT_REFILL_PER_SECOND" },
  rateLimitStore: { flag: "rate-limit-store", env: "RATE_LIMIT_STORE" },
  redisUrl: { flag: "redis-url", env: "REDIS_URL", secret: true },
  logLevel: { flag: "log-level", env: "LOG_LEVEL" },
  auth: { flag: "auth", env: "AUTH" },
  metricsPort: { flag: "metrics-port", env: "METRICS_PORT" },
  metricsHost: { flag: "metrics-host", env: "METRICS_HOST" },
  workers: { flag: "workers", env: "WORKERS" },
  scryptN: { env: "SCRYPT_N" },
  scryptR: { env: "SCRYPT_R" },
  scryptP: { env: "SCRYPT_P" },
  scryptMaxConcurrent: { env: "SCRYPT_MAX_CONCURRENT" },
  scryptMaxQueued: { env: "SCRYPT_MAX_QUEUED" },
  // A collector's URL may carry credentials (userinfo): never echoed.
  otlpEndpoint: { env: "OTEL_EXPORTER_OTLP_ENDPOINT", secret: true },
  otlpTracesEndpoint: { env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", secret: true },
  otelServiceName: { env: "OTEL_SERVICE_NAME" },
  otelTracesSampler: { env: "OTEL_TRACES_SAMPLER" },
  otelTracesSamplerArg: { env: "OTEL_TRACES_SAMPLER_ARG" },
  otelTracesExporter: { env: "OTEL_TRACES_EXPORTER" },
  otelSdkDisabled: { env: "OTEL_SDK_DISABLED" }
} as const satisfies Record<string, OptionSpec>
type OptionKey = keyof typeof options

/**
 * An option's text, checked in one go: whatever is wrong with it, the error states the whole rule (not the step that
 * failed, nor Schema's internals). One check, because an effect 4 message cannot override those of inner checks.
 */
const text = (message: string, accepts: (text: string) => boolean) =>
  Schema.String.check(Schema.makeFilter(accepts, { message }))

const WHOLE_NUMBER = /^(0|[1-9][0-9]*)$/

const wholeNumber = (message: string, accepts: (n: number) => boolean) =>
  text(message, (value) => WHOLE_NUMBER.test(value) && accepts(Number(value))).pipe(
    Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString)
  )

const integer = (min: number, max: number) =>
  wholeNumber(`must be an integer from ${min} to ${max}`, (n) => n >= min && n <= max)

const positiveDecimal = (max: number) =>
  text(
    `must be a number above 0 and at most ${max}`,
    (value) => /^(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(value) && Number(value) > 0 && Number(value) <= max
  ).pipe(Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString))

const oneOf = <const L extends ReadonlyArray<string>>(values: L) =>
  Schema.Literals(values).annotate({ message: `must be one of ${values.join(", ")}` })

const nonEmpty = text("must not be empty", (value) => value.length > 0)

/** An option that may be left out, then `value`. */
const withDefault = <S extends Schema.Top>(schema: S, value: S["Type"]) =>
  schema.pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed(value)))

/** Far above any machine's cores: past it a typo, not a plan. */
const MAX_WORKERS = 1024
const httpUrl = text("must be an http:// or https:// URL", (value) => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
})

const DEFAULT_SERVICE_NAME = "accord"

const powerOfTwo = (n: number) => Number.isInteger(n) && n >= 2 && (n & (n - 1)) === 0

const RawConfig = Schema.Struct({
  adapter: withDefault(oneOf(["koa", "fastify", "express", "fetch"]), defaultConfig.adapter),
  host: withDefault(nonEmpty, defaultConfig.host),
  port: withDefault(integer(0, 65535), defaultConfig.port),
  store: withDefault(oneOf(["memory", "postgres"]), defaultConfig.store),
  databaseUrl: Schema.optionalKey(
    Schema.RedactedFromValue(
      text("must be a postgres:// or postgresql:// URL", (value) => /^postgres(ql)?:\/\/./.test(value))
    )
  ),
  // The store's rule for a schema name (store-postgres quoteSchema), checked here so a bad one is exit 2, not 1.
  databaseSchema: Schema.optionalKey(
    text("must be 1 to 63 characters of [A-Za-z0-9_], not starting with a digit", (value) =>
      /^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(value)
    )
  ),
  seedFile: Schema.optionalKey(nonEmpty),
  drainTimeoutMs: withDefault(integer(0, 3_600_000), defaultConfig.drainTimeoutMs),
  bodyLimit: withDefault(integer(1, 100 * 1024 * 1024), defaultConfig.bodyLimit),
  // Node needs room for a request line and a few headers; below 1 KiB nothing useful fits.
  maxHeaderSize: withDefault(integer(1024, 1024 * 1024), defaultConfig.maxHeaderSize),
  maxPathLength: withDefault(integer(16, 1024 * 1024), defaultConfig.maxPathLength),
  requestTimeoutMs: withDefault(integer(0, 3_600_000), defaultConfig.requestTimeoutMs),
  headersTimeoutMs: Schema.optionalKey(integer(0, 3_600_000)),
  maxConnections: withDefault(integer(0, 1_000_000), defaultConfig.maxConnections),
  rateLimitCapacity: Schema.optionalKey(integer(1, 1_000_000)),
  rateLimitRefillPerSecond: Schema.optionalKey(positiveDecimal(1_000_000)),
  rateLimitStore: Schema.optionalKey(oneOf(RATE_LIMIT_STORES)),
  redisUrl: Schema.optionalKey(
    Schema.RedactedFromValue(text("must be a redis:// or rediss:// URL", (value) => /^rediss?:\/\/./.test(value)))
  ),
  logLevel: withDefault(oneOf(LOG_LEVELS), defaultConfig.logLevel),
  // Node's scrypt accepts any power of two above 1; the upper bounds keep one hash under 1 GiB of memory.
  scryptN: withDefault(
    wholeNumber("must be a power of two from 2 to 1048576", (n) => n <= 2 ** 20 && powerOfTwo(n)),
    defaultConfig.scrypt.N
  ),
  scryptR: withDefault(integer(1, 32), defaultConfig.scrypt.r),
  scryptP: withDefault(integer(1, 16), defaultConfig.scrypt.p),
  scryptMaxConcurrent: withDefault(integer(1, 1024), defaultConfig.hashing.maxConcurrent),
  scryptMaxQueued: withDefault(integer(0, 1_000_000), defaultConfig.hashing.maxQueued),
  auth: withDefault(oneOf(["store", "jwt"]), defaultConfig.auth),
  metricsPort: Schema.optionalKey(integer(0, 65535)),
  metricsHost: Schema.optionalKey(nonEmpty),
  workers: withDefault(
    text(
      `must be auto or an integer from 1 to ${MAX_WORKERS}`,
      (value) => value === "auto" || (WHOLE_NUMBER.test(value) && Number(value) >= 1 && Number(value) <= MAX_WORKERS)
    ),
    String(defaultConfig.workers)
  ),
  otlpEndpoint: Schema.optionalKey(httpUrl),
  otlpTracesEndpoint: Schema.optionalKey(httpUrl),
  otelServiceName: withDefault(nonEmpty, DEFAULT_SERVICE_NAME),
  otelTracesSampler: withDefault(oneOf(TRACES_SAMPLERS), "parentbased_always_on"),
  otelTracesSamplerArg: withDefault(
    text("must be a number from 0 to 1", (value) => /^(0(\.[0-9]+)?|1(\.0+)?|\.[0-9]+)$/.test(value)).pipe(
      Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString)
    ),
    1
  ),
  // OpenTelemetry's spellings: `none` turns traces off, `otlp` is the only exporter there is.
  otelTracesExporter: withDefault(oneOf(["otlp", "none"]), "otlp"),
  otelSdkDisabled: withDefault(oneOf(["true", "false"]), "false")
})

const describeOption = (key: OptionKey): string => {
  const option: OptionSpec = options[key]
  return option.flag === undefined ? option.env : `--${option.flag} (${option.env})`
}

const isOptionKey = (key: PropertyKey | undefined): key is OptionKey =>
  typeof key === "string" && Object.hasOwn(options, key)

const formatIssues = (issue: SchemaIssue.Issue, raw: Partial<Record<OptionKey, string>>): string => {
  const seen = new Set<string>()
  const lines: Array<string> = []
  for (const { path, message } of SchemaIssue.makeFormatterStandardSchemaV1()(issue).issues) {
    // Standard Schema allows a path segment to be an object; effect's formatter gives plain keys.
    const segment = path?.[0]
    const key = typeof segment === "object" ? segment.key : segment
    if (!isOptionKey(key)) {
      lines.push(message)
      continue
    }
    if (seen.has(key)) continue
    seen.add(key)
    const option: OptionSpec = options[key]
    // The database URL usually carries a password, so its value is never echoed.
    const got = option.secret === true ? "" : `, got ${JSON.stringify(raw[key])}`
    lines.push(`${describeOption(key)} ${message}${got}`)
  }
  return lines.join("\n")
}

export type ParsedCommandLine = { readonly _tag: "Help" } | { readonly _tag: "Run"; readonly config: AccordConfig }

/**
 * Reads flags and environment (a flag wins; an empty environment variable counts as unset) into a decoded config.
 * Throws ConfigError naming every bad option.
 */
export const parseConfig = (
  argv: ReadonlyArray<string>,
  env: Readonly<Record<string, string | undefined>>
): ParsedCommandLine => {
  const stringFlags = Object.fromEntries(
    Object.values(options).flatMap((option) => ("flag" in option ? [[option.flag, { type: "string" as const }]] : []))
  )
  let flags: Record<string, string | boolean | undefined>
  try {
    flags = parseArgs({
      args: [...argv],
      options: { ...stringFlags, help: { type: "boolean", short: "h" } },
      strict: true,
      allowPositionals: false
    }).values as Record<string, string | boolean | undefined>
  } catch (error) {
    throw new ConfigError(`${error instanceof Error ? error.message : String(error)}\nRun with --help for usage.`)
  }
  if (flags["help"] === true) return { _tag: "Help" }

  const raw: Partial<Record<OptionKey, string>> = {}
  for (const [key, option] of Object.entries(options) as Array<[OptionKey, OptionSpec]>) {
    const fromFlag = option.flag === undefined ? undefined : flags[option.flag]
    const fromEnv = env[option.env]
    if (typeof fromFlag === "string") raw[key] = fromFlag
    else if (fromEnv !== undefined && fromEnv !== "") raw[key] = fromEnv
  }

  const decoded = Schema.decodeUnknownResult(RawConfig, { errors: "all" })(raw)
  if (Result.isFailure(decoded)) throw new ConfigError(formatIssues(decoded.failure.issue, raw))
  const {
    scryptN,
    scryptR,
    scryptP,
    scryptMaxConcurrent,
    scryptMaxQueued,
    databaseUrl,
    databaseSchema,
    seedFile,
    headersTimeoutMs: headersTimeoutGiven,
    rateLimitCapacity,
    rateLimitRefillPerSecond,
    metricsPort,
    metricsHost,
    rateLimitStore,
    redisUrl,
    workers: workersGiven,
    otlpEndpoint,
    otlpTracesEndpoint,
    otelServiceName,
    otelTracesSampler,
    otelTracesSamplerArg,
    otelTracesExporter,
    otelSdkDisabled,
    ...rest
  } = decoded.success
  if (rest.store === "postgres" && databaseUrl === undefined) {
    throw new ConfigError(`${describeOption("databaseUrl")} is required with --store postgres`)
  }
  // Node refuses a headers timeout above the request timeout; the default one yields to a shorter request timeout.
  const { requestTimeoutMs } = rest
  const headersTimeoutMs =
    headersTimeoutGiven ??
    (requestTimeoutMs > 0 ? Math.min(defaultConfig.headersTimeoutMs, requestTimeoutMs) : defaultConfig.headersTimeoutMs)
  if (requestTimeoutMs > 0 && headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      `${describeOption("headersTimeoutMs")} must not exceed ${describeOption("requestTimeoutMs")} (${headersTimeoutMs} > ${requestTimeoutMs})`
    )
  }
  if ((rateLimitCapacity === undefined) !== (rateLimitRefillPerSecond === undefined)) {
    throw new ConfigError(
      `${describeOption("rateLimitCapacity")} and ${describeOption("rateLimitRefillPerSecond")} go together: give both or neither`
    )
  }
  if (metricsPort === undefined && metricsHost !== undefined) {
    throw new ConfigError(`${describeOption("metricsHost")} needs ${describeOption("metricsPort")}`)
  }
  if (metricsPort !== undefined && metricsPort !== 0 && metricsPort === rest.port) {
    throw new ConfigError(
      `${describeOption("metricsPort")} must differ from ${describeOption("port")} (both ${metricsPort})`
    )
  }
  // A store for a limit that is off would be a setting that silently does nothing.
  if (rateLimitStore !== undefined && rateLimitCapacity === undefined) {
    throw new ConfigError(
      `${describeOption("rateLimitStore")} needs a rate limit: ${describeOption("rateLimitCapacity")} and ${describeOption("rateLimitRefillPerSecond")}`
    )
  }
  if (rateLimitStore === "postgres" && rest.store !== "postgres") {
    throw new ConfigError(
      `${describeOption("rateLimitStore")} postgres needs --store postgres: the limit is kept in the store's database`
    )
  }
  if (rateLimitStore === "redis" && redisUrl === undefined) {
    throw new ConfigError(`${describeOption("redisUrl")} is required with --rate-limit-store redis`)
  }
  const workers = workersGiven === "auto" ? availableParallelism() : Number(workersGiven)
  if (workers > 1 && rest.store === "memory") {
    const given = workersGiven === "auto" ? `auto (${workers} cores)` : workersGiven
    throw new ConfigError(
      `${describeOption("workers")} ${given} needs --store postgres: with the memory store each worker would hold its own data`
    )
  }
  let jwt: JwtAuthConfig | undefined
  if (rest.auth === "jwt") {
    const fromEnv = jwtConfigFromEnv(env)
    if (Result.isFailure(fromEnv)) throw new ConfigError(`${describeOption("auth")} jwt: ${fromEnv.failure.message}`)
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
    _tag: "Run",
    config: {
      ...rest,
      ...(tracing === undefined ? {} : { tracing }),
      ...(databaseUrl === undefined ? {} : { databaseUrl }),
      ...(databaseSchema === undefined ? {} : { databaseSchema }),
      ...(seedFile === undefined ? {} : { seedFile }),
      ...(jwt === undefined ? {} : { jwt }),
      ...(redisUrl === undefined ? {} : { redisUrl }),
      ...(rateLimitCapacity !== undefined &&
        rateLimitRefillPerSecond !== undefined && {
          rateLimit: {
            capacity: rateLimitCapacity,
            refillPerSecond: rateLimitRefillPerSecond,
            store: rateLimitStore ?? "memory"
          }
        }),
      ...(metricsPort !== undefined && { metrics: { host: metricsHost ?? DEFAULT_METRICS_HOST, port: metricsPort } }),
      headersTimeoutMs,
      workers,
      scrypt: { N: scryptN, r: scryptR, p: scryptP },
      hashing: { maxConcurrent: scryptMaxConcurrent, maxQueued: scryptMaxQueued }
    }
  }
}
