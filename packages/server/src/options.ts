import {
  fromParse,
  fromSchema,
  instant,
  integer,
  nonEmpty,
  oneOf,
  onOff,
  option,
  redacted,
  renderMarkdown,
  renderUsage,
  replaceBetween,
  text,
  textSchema,
  wholeNumberSchema
} from "@accord/cli-options"
import { parseWebhookSecrets, WEBHOOK_SECRETS_RULE } from "@accord/contract/webhook-secrets"
import { ALIAS_DEPRECATED_AT, ALIAS_SUNSET_AT } from "@accord/contract/deprecation"
import { DEFAULT_BODY_LIMIT, DEFAULT_MAX_PATH_LENGTH } from "@accord/core"
import { DEFAULT_CLOCK_TOLERANCE_SECONDS } from "@accord/auth-jwt"
import { DEFAULT_SCRYPT_MAX_CONCURRENT, DEFAULT_SCRYPT_MAX_QUEUED, productionScryptCost } from "@accord/node/scrypt"
import {
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_MAX_HEADER_SIZE,
  DEFAULT_PORT,
  DEFAULT_REQUEST_TIMEOUT_MS
} from "@accord/node/server"
import { Schema, SchemaTransformation } from "effect"

export const ADAPTERS = ["koa", "fastify", "express", "fetch"] as const
export const STORES = ["memory", "postgres", "pglite"] as const
export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const
export const RATE_LIMIT_STORES = ["memory", "postgres", "redis"] as const
export const AUTH_KINDS = ["store", "jwt"] as const

/** The samplers OpenTelemetry's `OTEL_TRACES_SAMPLER` names that the SDK implements. */
export const TRACES_SAMPLERS = [
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
  "always_on",
  "always_off",
  "traceidratio"
] as const

/** Where metrics listen unless told: loopback only, since they are for operators, not clients. */
export const DEFAULT_METRICS_HOST = "127.0.0.1"

/** Far above any machine's cores: past it a typo, not a plan. */
const MAX_WORKERS = 1024

const WHOLE_NUMBER = /^(0|[1-9][0-9]*)$/

const positiveDecimal = (max: number) =>
  fromSchema(
    "R",
    textSchema(
      `must be a number above 0 and at most ${max}`,
      (value) => /^(0|[1-9][0-9]*)(\.[0-9]+)?$/.test(value) && Number(value) > 0 && Number(value) <= max
    ).pipe(Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString))
  )

const httpUrl = text("URL", "must be an http:// or https:// URL", (value) => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
})

/** One or more http or https URLs, separated by spaces (a repeated flag's values are joined so). */
const httpUrls = fromParse<ReadonlyArray<string>>("URL", "must be http:// or https:// URLs", (value) => {
  const urls = value.trim().split(/\s+/)
  const valid = urls.every((url) => {
    try {
      const parsed = new URL(url)
      return parsed.protocol === "http:" || parsed.protocol === "https:"
    } catch {
      return false
    }
  })
  return valid && urls.length > 0 ? urls : undefined
})

/**
 * `*`, or a comma-separated list of exact origins (`scheme://host[:port]`, as a browser sends Origin: no path, no
 * trailing slash), each an http or https URL that is its own origin.
 */
const corsOrigins = fromParse<ReadonlyArray<string> | "*">(
  "ORIGINS",
  "must be * or comma-separated origins such as https://app.example.com,http://localhost:5173",
  (value) => {
    if (value.trim() === "*") return "*"
    const origins = value.split(",").map((origin) => origin.trim())
    const valid = origins.every((origin) => {
      try {
        const url = new URL(origin)
        return (url.protocol === "http:" || url.protocol === "https:") && url.origin === origin
      } catch {
        return false
      }
    })
    return valid && origins.length > 0 ? origins : undefined
  }
)

const powerOfTwo = (n: number) => Number.isInteger(n) && n >= 2 && (n & (n - 1)) === 0

const group = {
  http: "HTTP",
  store: "Store",
  limits: "Limits",
  rateLimit: "Rate limit",
  logs: "Logs",
  hashing: "Password hashing",
  auth: "Authentication",
  metrics: "Metrics",
  workers: "Workers",
  events: "Events",
  traces: "Traces (OpenTelemetry)"
} as const

/** Which answers get a "request" log line: every one, only 5xx, or one in `sample` plus every 5xx. */
export type LogRequests = "all" | "off" | { readonly sample: number }

/** Past a million, sampling logs next to nothing: a typo, not a plan. */
const MAX_LOG_SAMPLE = 1_000_000

const parseLogRequests = (value: string): LogRequests | undefined => {
  if (value === "all" || value === "off") return value
  // Bounded before the number is read: at most seven digits.
  const sample = /^sample=([1-9][0-9]{0,6})$/.exec(value)?.[1]
  return sample !== undefined && Number(sample) <= MAX_LOG_SAMPLE ? { sample: Number(sample) } : undefined
}

/**
 * Every option of the `accord` command, in the order of its usage text and README list (and of its errors). Each
 * entry is the whole of an option: the parser, the environment twin, `--help`, the README and the type of
 * `parseConfig`'s result all come from here (README "Options"; adding one: docs in packages/cli-options/README.md).
 */
export const serverOptions = {
  adapter: option({
    group: group.http,
    flag: "adapter",
    env: "ADAPTER",
    type: oneOf(ADAPTERS),
    default: "fastify",
    help: "HTTP adapter (`fetch`: the WinterCG handler on `@hono/node-server`)"
  }),
  host: option({
    group: group.http,
    flag: "host",
    env: "HOST",
    type: nonEmpty("HOST"),
    default: DEFAULT_HOST,
    help: "address to listen on"
  }),
  port: option({
    group: group.http,
    flag: "port",
    env: "PORT",
    type: integer(0, 65535, "PORT"),
    default: DEFAULT_PORT,
    help: "port, `0` picks a free one"
  }),
  corsOrigin: option({
    group: group.http,
    flag: "cors-origin",
    env: "CORS_ORIGIN",
    type: corsOrigins,
    unsetMeans: "off",
    help: 'browser pages allowed to call the API: `*` or comma-separated exact origins (docs/api.md, "CORS")'
  }),
  requireIfMatch: option({
    group: group.http,
    flag: "require-if-match",
    env: "REQUIRE_IF_MATCH",
    type: onOff,
    default: false,
    help: 'a PUT of the preferences without `If-Match` is 428 `precondition_required` (docs/api.md, "Conditional requests")'
  }),
  aliasDeprecation: option({
    group: group.http,
    flag: "alias-deprecation",
    env: "ALIAS_DEPRECATION",
    type: instant(),
    unsetMeans: ALIAS_DEPRECATED_AT.slice(0, 10),
    help: 'when the spec\'s `/v1/payment-methods/{id}/` alias is deprecated: its `Deprecation` header (docs/api.md, "Versioning")'
  }),
  aliasSunset: option({
    group: group.http,
    flag: "alias-sunset",
    env: "ALIAS_SUNSET",
    type: instant(),
    unsetMeans: ALIAS_SUNSET_AT.slice(0, 10),
    help: "when that alias goes away: its `Sunset` header, and from then on 410 `gone`; not before `--alias-deprecation`"
  }),
  store: option({
    group: group.store,
    flag: "store",
    env: "STORE",
    type: oneOf(STORES),
    default: "memory",
    help:
      "where the data is kept: `memory` (this process, lost when it stops), `postgres` (a server) or `pglite` " +
      "(PostgreSQL in this process, on disk in `--data-dir`)"
  }),
  databaseUrl: option({
    group: group.store,
    flag: "database-url",
    env: "DATABASE_URL",
    type: redacted(
      text("URL", "must be a postgres:// or postgresql:// URL", (value) => /^postgres(ql)?:\/\/./.test(value))
    ),
    secret: true,
    help: "`postgres://` connection string, required with `--store postgres`; migrations run at start; never logged"
  }),
  // The store's rule for a schema name (store-postgres quoteSchema), checked here so a bad one is exit 2, not 1.
  databaseSchema: option({
    group: group.store,
    flag: "database-schema",
    env: "DATABASE_SCHEMA",
    type: text("NAME", "must be 1 to 63 characters of [A-Za-z0-9_], not starting with a digit", (value) =>
      /^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(value)
    ),
    unsetMeans: "the connection's `search_path`, usually `public`",
    help: "PostgreSQL schema for Accord's tables, created when missing: `[A-Za-z_][A-Za-z0-9_]{0,62}`"
  }),
  databaseQueryTimeoutMs: option({
    group: group.store,
    flag: "database-query-timeout-ms",
    env: "DATABASE_QUERY_TIMEOUT_MS",
    type: integer(100, 600_000, "MS"),
    // store-postgres's DEFAULT_QUERY_TIMEOUT_MS, written out: --help must not load the database drivers (a test
    // checks they agree).
    default: 5_000,
    help: "the longest a database statement may take, its wait for a connection included; past it `503 unavailable`"
  }),
  credentialCacheTtlMs: option({
    group: group.store,
    flag: "credential-cache-ttl-ms",
    env: "CREDENTIAL_CACHE_TTL_MS",
    type: integer(0, 60_000, "MS"),
    // store-postgres's DEFAULT_CREDENTIAL_CACHE_TTL_MS, written out as the query timeout's is (a test checks they agree).
    default: 5_000,
    help:
      "`postgres` and `pglite` stores: how long a token found in the database is accepted without asking again, so " +
      "how long a deleted one keeps working; 0: no cache"
  }),
  // No default: a directory relative to wherever the service happens to start would scatter databases.
  dataDir: option({
    group: group.store,
    flag: "data-dir",
    env: "DATA_DIR",
    type: nonEmpty("DIR"),
    help: "the PGlite database's directory, required with `--store pglite`, created when missing; one process at a time"
  }),
  seedFile: option({
    group: group.store,
    flag: "seed",
    env: "SEED_FILE",
    type: nonEmpty("FILE"),
    help: "JSON seed file loaded at start"
  }),
  drainTimeoutMs: option({
    group: group.limits,
    flag: "drain-timeout-ms",
    env: "DRAIN_TIMEOUT_MS",
    type: integer(0, 3_600_000, "MS"),
    default: DEFAULT_DRAIN_TIMEOUT_MS,
    help: "how long shutdown lets accepted requests finish"
  }),
  bodyLimit: option({
    group: group.limits,
    flag: "body-limit",
    env: "BODY_LIMIT",
    type: integer(1, 100 * 1024 * 1024, "BYTES"),
    default: DEFAULT_BODY_LIMIT,
    help: "request body limit"
  }),
  // Node needs room for a request line and a few headers; below 1 KiB nothing useful fits.
  maxHeaderSize: option({
    group: group.limits,
    flag: "max-header-size",
    env: "MAX_HEADER_SIZE",
    type: integer(1024, 1024 * 1024, "BYTES"),
    default: DEFAULT_MAX_HEADER_SIZE,
    help: "request line plus headers"
  }),
  maxPathLength: option({
    group: group.limits,
    flag: "max-path-length",
    env: "MAX_PATH_LENGTH",
    type: integer(16, 1024 * 1024, "CHARS"),
    default: DEFAULT_MAX_PATH_LENGTH,
    help: "longest request path, query excluded"
  }),
  requestTimeoutMs: option({
    group: group.limits,
    flag: "request-timeout-ms",
    env: "REQUEST_TIMEOUT_MS",
    type: integer(0, 3_600_000, "MS"),
    default: DEFAULT_REQUEST_TIMEOUT_MS,
    help: "time to receive a whole request, `0` for none"
  }),
  headersTimeoutMs: option({
    group: group.limits,
    flag: "headers-timeout-ms",
    env: "HEADERS_TIMEOUT_MS",
    type: integer(0, 3_600_000, "MS"),
    default: DEFAULT_HEADERS_TIMEOUT_MS,
    help: "time to receive the headers, `0` for none; at most the request timeout, which the default yields to"
  }),
  maxConnections: option({
    group: group.limits,
    flag: "max-connections",
    env: "MAX_CONNECTIONS",
    type: integer(0, 1_000_000),
    default: 0,
    help: "connections open at once, `0` for no cap; keep it below the file descriptor limit"
  }),
  rateLimitCapacity: option({
    group: group.rateLimit,
    flag: "rate-limit-capacity",
    env: "RATE_LIMIT_CAPACITY",
    type: integer(1, 1_000_000),
    unsetMeans: "off",
    help: "per-credential rate limit: `N` requests per window of `N / R` seconds, rounded up to whole seconds"
  }),
  rateLimitRefillPerSecond: option({
    group: group.rateLimit,
    flag: "rate-limit-refill-per-second",
    env: "RATE_LIMIT_REFILL_PER_SECOND",
    type: positiveDecimal(1_000_000),
    help: "the sustained rate, required with a capacity (a fraction such as `0.5` too)"
  }),
  rateLimitStore: option({
    group: group.rateLimit,
    flag: "rate-limit-store",
    env: "RATE_LIMIT_STORE",
    type: oneOf(RATE_LIMIT_STORES),
    default: "memory",
    help:
      "where the limit is counted: this process (a cluster's workers share their primary's), the store's database " +
      "(needs `--store postgres`) or Redis; when it fails, each process limits by itself"
  }),
  redisUrl: option({
    group: group.rateLimit,
    flag: "redis-url",
    env: "REDIS_URL",
    type: redacted(text("URL", "must be a redis:// or rediss:// URL", (value) => /^rediss?:\/\/./.test(value))),
    secret: true,
    help: "`redis://` or `rediss://` URL, required with `--rate-limit-store redis`; never logged"
  }),
  logLevel: option({
    group: group.logs,
    flag: "log-level",
    env: "LOG_LEVEL",
    type: oneOf(LOG_LEVELS),
    placeholder: "LEVEL",
    default: "info",
    help: "`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`"
  }),
  logRequests: option({
    group: group.logs,
    flag: "log-requests",
    env: "LOG_REQUESTS",
    type: fromParse<LogRequests>(
      "all|off|sample=N",
      `must be all, off or sample=N with N from 1 to ${MAX_LOG_SAMPLE}`,
      parseLogRequests
    ),
    default: "all",
    help: "a `request` line for every answer, for none, or for one in N; a 5xx answer always gets one"
  }),
  // Node's scrypt accepts any power of two above 1; the upper bounds keep one hash under 1 GiB of memory.
  scryptN: option({
    group: group.hashing,
    env: "SCRYPT_N",
    type: fromSchema(
      "N",
      wholeNumberSchema("must be a power of two from 2 to 1048576", (n) => n <= 2 ** 20 && powerOfTwo(n))
    ),
    default: productionScryptCost.N,
    help: "scrypt cost: CPU and memory (a lower cost than the default is logged as a warning)"
  }),
  scryptR: option({
    group: group.hashing,
    env: "SCRYPT_R",
    type: integer(1, 32),
    default: productionScryptCost.r,
    help: "scrypt block size"
  }),
  scryptP: option({
    group: group.hashing,
    env: "SCRYPT_P",
    type: integer(1, 16),
    default: productionScryptCost.p,
    help: "scrypt parallelization"
  }),
  scryptMaxConcurrent: option({
    group: group.hashing,
    env: "SCRYPT_MAX_CONCURRENT",
    type: integer(1, 1024),
    default: DEFAULT_SCRYPT_MAX_CONCURRENT,
    help: "hashes computed at once"
  }),
  scryptMaxQueued: option({
    group: group.hashing,
    env: "SCRYPT_MAX_QUEUED",
    type: integer(0, 1_000_000),
    default: DEFAULT_SCRYPT_MAX_QUEUED,
    help: "hashes waiting for a slot; past them, `503` with `Retry-After`"
  }),
  auth: option({
    group: group.auth,
    flag: "auth",
    env: "AUTH",
    type: oneOf(AUTH_KINDS),
    default: "store",
    help: "who checks bearer tokens: the store's seeded ones, or JWTs"
  }),
  metricsPort: option({
    group: group.metrics,
    flag: "metrics-port",
    env: "METRICS_PORT",
    type: integer(0, 65535, "PORT"),
    unsetMeans: "off",
    help: "serve Prometheus metrics at `GET /metrics` on this port, `0` picks a free one"
  }),
  metricsHost: option({
    group: group.metrics,
    flag: "metrics-host",
    env: "METRICS_HOST",
    type: nonEmpty("HOST"),
    default: DEFAULT_METRICS_HOST,
    help: "address of the metrics listener, whatever `--host` is; metrics are for a private network, never expose them to clients"
  }),
  workers: option({
    group: group.workers,
    flag: "workers",
    env: "WORKERS",
    type: fromParse<number | "auto">(`N|auto`, `must be auto or an integer from 1 to ${MAX_WORKERS}`, (value) =>
      value === "auto"
        ? "auto"
        : WHOLE_NUMBER.test(value) && Number(value) >= 1 && Number(value) <= MAX_WORKERS
          ? Number(value)
          : undefined
    ),
    default: 1,
    help: "processes serving the port, `auto`: one per core; more than 1 needs `--store postgres`"
  }),
  // A webhook URL may carry a credential (userinfo, a query token): never echoed, and kept by its digest only.
  webhookUrl: option({
    group: group.events,
    flag: "webhook-url",
    env: "WEBHOOK_URLS",
    type: httpUrls,
    secret: true,
    repeatable: true,
    unsetMeans: "no webhooks",
    help: 'an endpoint every event is POSTed to, signed with `WEBHOOK_SECRET`; repeatable (the variable: space-separated) (docs/operations.md, "Events")'
  }),
  webhookSecret: option({
    group: group.events,
    env: "WEBHOOK_SECRET",
    // The grammar verifyWebhook reads too (@accord/contract/webhook-secrets): decoded here, once, to the keys.
    type: redacted(fromParse("SECRETS", WEBHOOK_SECRETS_RULE, parseWebhookSecrets)),
    secret: true,
    help: 'the webhooks\' `whsec_` signing secret (base64 of 16 bytes or more: `"whsec_$(openssl rand -base64 32)"` makes one), several separated by spaces during a rotation (each delivery is signed with every one); required with `--webhook-url`'
  }),
  eventsStreamHeartbeatSeconds: option({
    group: group.events,
    flag: "events-stream-heartbeat-seconds",
    env: "EVENTS_STREAM_HEARTBEAT_SECONDS",
    type: integer(1, 3600, "SECONDS"),
    default: 15,
    help: 'how often an open events stream sends a `: heartbeat` comment, so that proxies keep it (docs/api.md, "Events")'
  }),
  eventsStreamsPerCredential: option({
    group: group.events,
    flag: "events-streams-per-credential",
    env: "EVENTS_STREAMS_PER_CREDENTIAL",
    type: integer(1, 1_000_000),
    default: 5,
    help: "events streams one credential may hold open; past it 429 `too_many_streams`"
  }),
  eventsStreamsMax: option({
    group: group.events,
    flag: "events-streams-max",
    env: "EVENTS_STREAMS_MAX",
    type: integer(1, 1_000_000),
    default: 1000,
    help: "events streams one process holds open in total; past it 503 `unavailable`"
  }),
  webhookConnectTimeoutMs: option({
    group: group.events,
    flag: "webhook-connect-timeout-ms",
    env: "WEBHOOK_CONNECT_TIMEOUT_MS",
    type: integer(1, 600_000, "MS"),
    default: 5_000,
    help: "time to connect to a webhook endpoint"
  }),
  webhookTimeoutMs: option({
    group: group.events,
    flag: "webhook-timeout-ms",
    env: "WEBHOOK_TIMEOUT_MS",
    type: integer(1, 600_000, "MS"),
    default: 10_000,
    help: "time for an endpoint's answer once connected; a 2xx in time delivers the event"
  }),
  eventsNatsUrl: option({
    group: group.events,
    flag: "events-nats-url",
    env: "EVENTS_NATS_URL",
    type: text("URL", "must be a nats:// URL (or several, comma-separated)", (value) =>
      value.split(",").every((url) => /^(nats|tls):\/\/./.test(url.trim()))
    ),
    secret: true,
    unsetMeans: "off",
    help: "NATS servers with JetStream: every event is published to `accord.events.<type>` (stream `ACCORD_EVENTS`)"
  }),
  eventsRetryForS: option({
    group: group.events,
    flag: "events-retry-for-s",
    env: "EVENTS_RETRY_FOR_S",
    type: integer(1, 31_536_000, "SECONDS"),
    default: 259_200,
    help: "an event not delivered this long after it was recorded is marked failed (and kept)"
  }),
  eventsBackoffMs: option({
    group: group.events,
    flag: "events-backoff-ms",
    env: "EVENTS_BACKOFF_MS",
    type: integer(1, 3_600_000, "MS"),
    default: 1_000,
    help: "the first retry's wait; each next one doubles, up to an hour, with jitter"
  }),
  eventsPollMs: option({
    group: group.events,
    flag: "events-poll-ms",
    env: "EVENTS_POLL_MS",
    type: integer(1, 600_000, "MS"),
    default: 1_000,
    help: "how often the relay looks for events to deliver when it found none"
  }),
  eventsRetentionDays: option({
    group: group.events,
    flag: "events-retention-days",
    env: "EVENTS_RETENTION_DAYS",
    type: integer(0, 36_500, "DAYS"),
    default: 30,
    help: "delivered events older than this are removed from the store (PostgreSQL, PGlite), and so from the feed; 0 keeps them"
  }),
  // A collector's URL may carry credentials (userinfo): never echoed.
  otlpEndpoint: option({
    group: group.traces,
    env: "OTEL_EXPORTER_OTLP_ENDPOINT",
    type: httpUrl,
    secret: true,
    unsetMeans: "off",
    help: "the collector's base URL (`http://collector:4318`); spans go to its `/v1/traces`"
  }),
  otlpTracesEndpoint: option({
    group: group.traces,
    env: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    type: httpUrl,
    secret: true,
    help: "the traces URL itself; wins over the base endpoint"
  }),
  otelServiceName: option({
    group: group.traces,
    env: "OTEL_SERVICE_NAME",
    type: nonEmpty("NAME"),
    default: "accord",
    help: "the resource's `service.name` (`OTEL_RESOURCE_ATTRIBUTES` adds more)"
  }),
  otelTracesSampler: option({
    group: group.traces,
    env: "OTEL_TRACES_SAMPLER",
    type: oneOf(TRACES_SAMPLERS),
    placeholder: "SAMPLER",
    default: "parentbased_always_on",
    help: `which traces are kept: ${TRACES_SAMPLERS.map((sampler) => `\`${sampler}\``).join(", ")}`
  }),
  otelTracesSamplerArg: option({
    group: group.traces,
    env: "OTEL_TRACES_SAMPLER_ARG",
    type: fromSchema(
      "RATIO",
      textSchema("must be a number from 0 to 1", (value) => /^(0(\.[0-9]+)?|1(\.0+)?|\.[0-9]+)$/.test(value)).pipe(
        Schema.decodeTo(Schema.Number, SchemaTransformation.numberFromString)
      )
    ),
    default: 1,
    help: "the ratio of a `traceidratio` sampler, from 0 to 1"
  }),
  // OpenTelemetry's spellings: `none` turns traces off, `otlp` is the only exporter there is.
  otelTracesExporter: option({
    group: group.traces,
    env: "OTEL_TRACES_EXPORTER",
    type: oneOf(["otlp", "none"]),
    default: "otlp",
    help: "`none` keeps traces off even with an endpoint"
  }),
  otelSdkDisabled: option({
    group: group.traces,
    env: "OTEL_SDK_DISABLED",
    type: oneOf(["true", "false"]),
    default: "false",
    help: "`true` keeps traces off even with an endpoint"
  })
}

/** Settings that are not options of this table but belong beside them in the usage and the README. */
const groupNotes = {
  [group.auth]:
    "JWT settings with `--auth jwt`, environment only (`@accord/auth-jwt`): `JWT_SECRET` or `JWKS_URL` (exactly " +
    "one), `JWT_ISSUER`, `JWT_AUDIENCE`, and optionally `JWT_ALGORITHMS`, `JWT_CLIENT_CLAIM`, `JWT_CLIENT_SCOPE`, " +
    `\`JWT_CLOCK_TOLERANCE_S\` (default ${DEFAULT_CLOCK_TOLERANCE_SECONDS}).`,
  [group.traces]:
    "Off unless an endpoint is set. `OTEL_EXPORTER_OTLP_HEADERS` (and `_TRACES_HEADERS`, `_TIMEOUT`, `_COMPRESSION`, " +
    "certificates) and `OTEL_BSP_*` are read by the exporter and the batch processor themselves."
}

export const usage = renderUsage(serverOptions, {
  head: `Usage: accord [options]

Runs the Accord HTTP service. Every flag can also be set through the environment variable in brackets, and a flag
wins over it; some settings are environment only (NAME=VALUE). An empty variable counts as unset.`,
  notes: groupNotes,
  tail: `Once listening, prints one line to stdout: "listening on http://HOST:PORT". Logs are JSON lines on stderr.
SIGTERM or SIGINT drains in-flight requests, closes the store and exits 0; another within 1 s of the first is the
same stop (a process group's signal that npm forwards too), one later exits at once with 128 + signal.
Exit code 2: bad options or seed file, or a --data-dir another process holds.
With --workers above 1, a primary process runs that many workers on the one port, prints the line once, replaces a
worker that dies, and forwards SIGTERM/SIGINT to every worker; a worker that cannot start stops it with its code.`
})

const README_BEGIN =
  "<!-- options: generated from packages/server/src/options.ts by `npm run generate`; edit the table there -->"
const README_END = "<!-- end of options -->"

/**
 * The server's README with its option list ("Options") generated from the table: `npm run generate` writes it,
 * and a test fails while the README differs from it.
 */
export const readmeWithOptions = (readme: string): string =>
  replaceBetween(readme, README_BEGIN, README_END, renderMarkdown(serverOptions, groupNotes))
