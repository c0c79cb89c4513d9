import { parseArgs } from "node:util"
import { Either, ParseResult, Redacted, Schema } from "effect"
import { DEFAULT_MAX_PATH_LENGTH, type RateLimitOptions } from "@accord/core"
import {
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_MAX_HEADER_SIZE,
  DEFAULT_REQUEST_TIMEOUT_MS,
  DEFAULT_SCRYPT_MAX_CONCURRENT,
  DEFAULT_SCRYPT_MAX_QUEUED,
  productionScryptCost
} from "@accord/core/node"
import { jwtConfigFromEnv, type JwtAuthConfig } from "@accord/auth-jwt"

/** A start-up problem the operator must fix (bad flag, bad environment, bad seed file): exit code 2. */
export class ConfigError extends Error {
  override readonly name = "ConfigError"
  readonly exitCode = 2
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export interface ScryptCost {
  readonly N: number
  readonly r: number
  readonly p: number
}

/** Everything the composition root needs, decoded and defaulted. */
export interface AccordConfig {
  readonly adapter: "koa" | "fastify"
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
  /** Per-credential token bucket; off when absent (429 past it). */
  readonly rateLimit?: RateLimitOptions
  readonly logLevel: LogLevel
  readonly scrypt: ScryptCost
  /** Hashes computed at once, and hashes allowed to wait; past both, 503 with Retry-After. */
  readonly hashing: { readonly maxConcurrent: number; readonly maxQueued: number }
  /** Who checks credentials: the store's seeded tokens, or JWTs (then `jwt` holds their settings). */
  readonly auth: "store" | "jwt"
  readonly jwt?: JwtAuthConfig
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
  logLevel: "info",
  scrypt: productionScryptCost,
  hashing: { maxConcurrent: DEFAULT_SCRYPT_MAX_CONCURRENT, maxQueued: DEFAULT_SCRYPT_MAX_QUEUED },
  auth: "store"
}

export const usage = `Usage: accord [options]

Runs the Accord HTTP service. Every option can also be set through the environment variable in brackets;
a flag wins over the environment.

  --adapter koa|fastify      HTTP adapter (ADAPTER, default fastify)
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
  --rate-limit-capacity N    per-credential rate limit: requests at once (RATE_LIMIT_CAPACITY, default off)
  --rate-limit-refill-per-second R
                             requests per second regained, required with a capacity
                             (RATE_LIMIT_REFILL_PER_SECOND)
  --log-level LEVEL          fatal|error|warn|info|debug|trace|silent (LOG_LEVEL, default info)
  --auth store|jwt           who checks tokens: the store's seeded ones, or JWTs (AUTH, default store)
  -h, --help                 print this help and exit

  Password hashing cost, environment only: SCRYPT_N (default 32768), SCRYPT_R (default 8), SCRYPT_P (default 3);
  hashes at once SCRYPT_MAX_CONCURRENT (default 4) and waiting SCRYPT_MAX_QUEUED (default 64), then 503.
  JWT settings with --auth jwt, environment only: JWT_SECRET or JWKS_URL (exactly one), JWT_ISSUER, JWT_AUDIENCE,
  and optionally JWT_ALGORITHMS, JWT_CLIENT_CLAIM, JWT_CLIENT_SCOPE, JWT_CLOCK_TOLERANCE_S (default 5).

Once listening, prints one line to stdout: "listening on http://HOST:PORT". Logs are JSON lines on stderr.
SIGTERM or SIGINT drains in-flight requests, closes the store and exits 0. Exit code 2: bad options or seed file.
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
  rateLimitCapacity: { flag: "rate-limit-capacity", env: "RATE_LIMIT_CAPACITY" },
  rateLimitRefillPerSecond: { flag: "rate-limit-refill-per-second", env: "RATE_LIMIT_REFILL_PER_SECOND" },
  logLevel: { flag: "log-level", env: "LOG_LEVEL" },
  auth: { flag: "auth", env: "AUTH" },
  scryptN: { env: "SCRYPT_N" },
  scryptR: { env: "SCRYPT_R" },
  scryptP: { env: "SCRYPT_P" },
  scryptMaxConcurrent: { env: "SCRYPT_MAX_CONCURRENT" },
  scryptMaxQueued: { env: "SCRYPT_MAX_QUEUED" }
} as const satisfies Record<string, OptionSpec>
type OptionKey = keyof typeof options

/** The schema's message replaces every inner one, so an error states the rule rather than Schema internals. */
const rule = (message: string) => ({ message: () => ({ message, override: true }) })

const integer = (min: number, max: number) =>
  Schema.compose(Schema.String.pipe(Schema.pattern(/^(0|[1-9][0-9]*)$/)), Schema.NumberFromString)
    .pipe(Schema.int(), Schema.between(min, max))
    .annotations(rule(`must be an integer from ${min} to ${max}`))

const positiveDecimal = (max: number) =>
  Schema.compose(Schema.String.pipe(Schema.pattern(/^(0|[1-9][0-9]*)(\.[0-9]+)?$/)), Schema.NumberFromString)
    .pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(max))
    .annotations(rule(`must be a number above 0 and at most ${max}`))

const oneOf = <const L extends ReadonlyArray<string>>(...values: L) =>
  Schema.Literal(...values).annotations(rule(`must be one of ${values.join(", ")}`))

const powerOfTwo = (n: number) => Number.isInteger(n) && n >= 2 && (n & (n - 1)) === 0

const RawConfig = Schema.Struct({
  adapter: Schema.optionalWith(oneOf("koa", "fastify"), { exact: true, default: () => defaultConfig.adapter }),
  host: Schema.optionalWith(Schema.NonEmptyString.annotations(rule("must not be empty")), {
    exact: true,
    default: () => defaultConfig.host
  }),
  port: Schema.optionalWith(integer(0, 65535), { exact: true, default: () => defaultConfig.port }),
  store: Schema.optionalWith(oneOf("memory", "postgres"), { exact: true, default: () => defaultConfig.store }),
  databaseUrl: Schema.optionalWith(
    Schema.Redacted(
      Schema.String.pipe(Schema.pattern(/^postgres(ql)?:\/\/./)).annotations(rule("must be a postgres:// or postgresql:// URL"))
    ),
    { exact: true }
  ),
  // The store's rule for a schema name (store-postgres quoteSchema), checked here so a bad one is exit 2, not 1.
  databaseSchema: Schema.optionalWith(
    Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]{0,62}$/)).annotations(
      rule("must be 1 to 63 characters of [A-Za-z0-9_], not starting with a digit")
    ),
    { exact: true }
  ),
  seedFile: Schema.optionalWith(Schema.NonEmptyString.annotations(rule("must not be empty")), { exact: true }),
  drainTimeoutMs: Schema.optionalWith(integer(0, 3_600_000), { exact: true, default: () => defaultConfig.drainTimeoutMs }),
  bodyLimit: Schema.optionalWith(integer(1, 100 * 1024 * 1024), { exact: true, default: () => defaultConfig.bodyLimit }),
  // Node needs room for a request line and a few headers; below 1 KiB nothing useful fits.
  maxHeaderSize: Schema.optionalWith(integer(1024, 1024 * 1024), { exact: true, default: () => defaultConfig.maxHeaderSize }),
  maxPathLength: Schema.optionalWith(integer(16, 1024 * 1024), { exact: true, default: () => defaultConfig.maxPathLength }),
  requestTimeoutMs: Schema.optionalWith(integer(0, 3_600_000), { exact: true, default: () => defaultConfig.requestTimeoutMs }),
  headersTimeoutMs: Schema.optionalWith(integer(0, 3_600_000), { exact: true }),
  rateLimitCapacity: Schema.optionalWith(integer(1, 1_000_000), { exact: true }),
  rateLimitRefillPerSecond: Schema.optionalWith(positiveDecimal(1_000_000), { exact: true }),
  logLevel: Schema.optionalWith(oneOf(...LOG_LEVELS), { exact: true, default: () => defaultConfig.logLevel }),
  // Node's scrypt accepts any power of two above 1; the upper bounds keep one hash under 1 GiB of memory.
  scryptN: Schema.optionalWith(
    integer(2, 2 ** 20).pipe(Schema.filter(powerOfTwo)).annotations(rule("must be a power of two from 2 to 1048576")),
    { exact: true, default: () => defaultConfig.scrypt.N }
  ),
  scryptR: Schema.optionalWith(integer(1, 32), { exact: true, default: () => defaultConfig.scrypt.r }),
  scryptP: Schema.optionalWith(integer(1, 16), { exact: true, default: () => defaultConfig.scrypt.p }),
  scryptMaxConcurrent: Schema.optionalWith(integer(1, 1024), { exact: true, default: () => defaultConfig.hashing.maxConcurrent }),
  scryptMaxQueued: Schema.optionalWith(integer(0, 1_000_000), { exact: true, default: () => defaultConfig.hashing.maxQueued }),
  auth: Schema.optionalWith(oneOf("store", "jwt"), { exact: true, default: () => defaultConfig.auth })
})

const describeOption = (key: OptionKey): string => {
  const option: OptionSpec = options[key]
  return option.flag === undefined ? option.env : `--${option.flag} (${option.env})`
}

const formatIssues = (error: ParseResult.ParseError, raw: Partial<Record<OptionKey, string>>): string => {
  const seen = new Set<string>()
  const lines: Array<string> = []
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const key = issue.path[0] as OptionKey
    if (seen.has(key)) continue
    seen.add(key)
    const option: OptionSpec = options[key]
    // The database URL usually carries a password, so its value is never echoed.
    const got = option.secret === true ? "" : `, got ${JSON.stringify(raw[key])}`
    lines.push(`${describeOption(key)} ${issue.message}${got}`)
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

  const decoded = Schema.decodeUnknownEither(RawConfig, { errors: "all" })(raw)
  if (Either.isLeft(decoded)) throw new ConfigError(formatIssues(decoded.left, raw))
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
    ...rest
  } = decoded.right
  if (rest.store === "postgres" && databaseUrl === undefined) {
    throw new ConfigError(`${describeOption("databaseUrl")} is required with --store postgres`)
  }
  // Node refuses a headers timeout above the request timeout; the default one yields to a shorter request timeout.
  const { requestTimeoutMs } = rest
  const headersTimeoutMs =
    headersTimeoutGiven ?? (requestTimeoutMs > 0 ? Math.min(defaultConfig.headersTimeoutMs, requestTimeoutMs) : defaultConfig.headersTimeoutMs)
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
  let jwt: JwtAuthConfig | undefined
  if (rest.auth === "jwt") {
    const fromEnv = jwtConfigFromEnv(env)
    if (Either.isLeft(fromEnv)) throw new ConfigError(`${describeOption("auth")} jwt: ${fromEnv.left.message}`)
    jwt = fromEnv.right
  }
  return {
    _tag: "Run",
    config: {
      ...rest,
      ...(databaseUrl === undefined ? {} : { databaseUrl }),
      ...(databaseSchema === undefined ? {} : { databaseSchema }),
      ...(seedFile === undefined ? {} : { seedFile }),
      ...(jwt === undefined ? {} : { jwt }),
      ...(rateLimitCapacity !== undefined &&
        rateLimitRefillPerSecond !== undefined && { rateLimit: { capacity: rateLimitCapacity, refillPerSecond: rateLimitRefillPerSecond } }),
      headersTimeoutMs,
      scrypt: { N: scryptN, r: scryptR, p: scryptP },
      hashing: { maxConcurrent: scryptMaxConcurrent, maxQueued: scryptMaxQueued }
    }
  }
}
