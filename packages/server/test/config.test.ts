import { describe, expect, it } from "@effect/vitest"
import { Redacted } from "effect"
import { availableParallelism } from "node:os"
import { DEFAULT_CREDENTIAL_CACHE_TTL_MS, DEFAULT_QUERY_TIMEOUT_MS } from "@accord/store-postgres"
import { ConfigError, defaultConfig, parseConfig, usage, type AccordConfig } from "../src/config.js"

const run = (argv: ReadonlyArray<string>, env: Record<string, string | undefined> = {}): AccordConfig => {
  const parsed = parseConfig(argv, env)
  if (parsed._tag !== "Run") throw new Error("expected a config, got help")
  return parsed.config
}

const configError = (argv: ReadonlyArray<string>, env: Record<string, string | undefined> = {}): ConfigError => {
  try {
    parseConfig(argv, env)
  } catch (error) {
    if (error instanceof ConfigError) return error
    throw error
  }
  throw new Error("expected a ConfigError")
}

describe("parseConfig: the alias's dates (docs/api.md, Versioning)", () => {
  it("reads a date or a UTC date-time, from a flag or the environment", () => {
    const config = run(["--alias-deprecation", "2026-12-01", "--alias-sunset", "2027-06-01T12:00:00Z"])
    expect(config.aliasDeprecation).toEqual(new Date("2026-12-01T00:00:00Z"))
    expect(config.aliasSunset).toEqual(new Date("2027-06-01T12:00:00Z"))
    expect(run([], { ALIAS_SUNSET: "2030-01-01" }).aliasSunset).toEqual(new Date("2030-01-01T00:00:00Z"))
  })

  it("refuses what is not a UTC date, a date that does not exist, and a sunset before the deprecation", () => {
    expect(configError(["--alias-sunset", "2027-06-01T12:00:00+02:00"]).message).toContain("--alias-sunset")
    expect(configError(["--alias-sunset", "2027-02-30"]).message).toContain("must be a UTC date")
    expect(configError(["--alias-sunset", "2026-06-01"]).message).toMatch(
      /--alias-sunset.*is before --alias-deprecation/
    )
    expect(configError(["--alias-deprecation", "2027-01-01", "--alias-sunset", "2026-12-31"]).message).toMatch(
      /is before/
    )
  })
})

describe("parseConfig", () => {
  it("defaults to fastify on the memory store at 127.0.0.1:3000 with production scrypt cost", () => {
    const config = run([])
    expect(config).toEqual(defaultConfig)
    expect(config).toMatchObject({
      adapter: "fastify",
      host: "127.0.0.1",
      port: 3000,
      store: "memory",
      drainTimeoutMs: 10_000,
      bodyLimit: 16_384,
      logLevel: "info"
    })
    expect(config.scrypt).toEqual({ N: 32768, r: 8, p: 3 })
    expect(config.seedFile).toBeUndefined()
  })

  it("reads every option from the environment", () => {
    const config = run([], {
      ADAPTER: "koa",
      HOST: "0.0.0.0",
      PORT: "0",
      STORE: "postgres",
      DATABASE_URL: "postgres://postgres@127.0.0.1:5432/test",
      DATABASE_SCHEMA: "accord_env",
      SEED_FILE: "seed.json",
      DRAIN_TIMEOUT_MS: "2500",
      BODY_LIMIT: "1024",
      LOG_LEVEL: "debug",
      SCRYPT_N: "1024",
      SCRYPT_R: "4",
      SCRYPT_P: "1"
    })
    expect(config).toMatchObject({
      adapter: "koa",
      host: "0.0.0.0",
      port: 0,
      store: "postgres",
      databaseSchema: "accord_env",
      seedFile: "seed.json",
      drainTimeoutMs: 2500,
      bodyLimit: 1024,
      logLevel: "debug"
    })
    expect(config.scrypt).toEqual({ N: 1024, r: 4, p: 1 })
    expect(config.databaseUrl && Redacted.value(config.databaseUrl)).toBe("postgres://postgres@127.0.0.1:5432/test")
  })

  it("lets a flag win over the environment, in both --flag value and --flag=value forms", () => {
    const env = { ADAPTER: "koa", PORT: "4000", HOST: "0.0.0.0", SEED_FILE: "env.json", LOG_LEVEL: "debug" }
    const config = run(["--adapter", "fastify", "--port=0", "--seed", "flag.json", "--log-level", "warn"], env)
    expect(config).toMatchObject({
      adapter: "fastify",
      port: 0,
      seedFile: "flag.json",
      logLevel: "warn",
      host: "0.0.0.0"
    })
  })

  it("takes --database-schema over DATABASE_SCHEMA, and leaves it unset by default", () => {
    const env = { STORE: "postgres", DATABASE_URL: "postgres://127.0.0.1/test", DATABASE_SCHEMA: "from_env" }
    expect(run(["--database-schema", "_From_Flag_2"], env).databaseSchema).toBe("_From_Flag_2")
    expect(run([], env).databaseSchema).toBe("from_env")
    expect(run([], { ...env, DATABASE_SCHEMA: "" })).not.toHaveProperty("databaseSchema")
    expect(run([], { ...env, DATABASE_SCHEMA: "a".repeat(63) }).databaseSchema).toHaveLength(63)
  })

  it("treats an empty environment variable as unset", () => {
    expect(run([], { PORT: "", ADAPTER: "" })).toMatchObject({ port: 3000, adapter: "fastify" })
  })

  it("answers --help and -h with help", () => {
    expect(parseConfig(["--help"], {})._tag).toBe("Help")
    expect(parseConfig(["-h", "--port", "nope"], {})._tag).toBe("Help")
  })

  it.each([
    [["--port", "abc"], '--port (PORT) must be an integer from 0 to 65535, got "abc"'],
    [["--port", "65536"], '--port (PORT) must be an integer from 0 to 65535, got "65536"'],
    [["--port=-1"], '--port (PORT) must be an integer from 0 to 65535, got "-1"'],
    [["--port", "-1"], "To specify an option argument starting with a dash use '--port=-XYZ'"],
    [["--port", "30.5"], "--port (PORT) must be an integer"],
    [["--port", "1e3"], "--port (PORT) must be an integer"],
    [["--port", ""], "--port (PORT) must be an integer"],
    [["--adapter", "hapi"], '--adapter (ADAPTER) must be one of koa, fastify, express, fetch, got "hapi"'],
    [["--store", "redis"], '--store (STORE) must be one of memory, postgres, pglite, got "redis"'],
    [["--log-level", "loud"], "--log-level (LOG_LEVEL) must be one of fatal, error, warn, info, debug, trace, silent"],
    [["--body-limit", "0"], "--body-limit (BODY_LIMIT) must be an integer from 1 to"],
    [["--drain-timeout-ms", "soon"], "--drain-timeout-ms (DRAIN_TIMEOUT_MS) must be an integer"],
    [["--host", ""], "--host (HOST) must not be empty"],
    [["--seed", ""], "--seed (SEED_FILE) must not be empty"],
    [
      ["--database-schema", "1st"],
      '--database-schema (DATABASE_SCHEMA) must be 1 to 63 characters of [A-Za-z0-9_], not starting with a digit, got "1st"'
    ],
    [
      ["--database-schema", 'a"; DROP SCHEMA public; --'],
      "--database-schema (DATABASE_SCHEMA) must be 1 to 63 characters"
    ],
    [["--database-schema", "a".repeat(64)], "--database-schema (DATABASE_SCHEMA) must be 1 to 63 characters"],
    [["--database-schema", ""], "--database-schema (DATABASE_SCHEMA) must be 1 to 63 characters"],
    [["--frobnicate"], "Unknown option '--frobnicate'"],
    [["--port"], "--port"],
    [["serve"], "Unexpected argument 'serve'"]
  ])("refuses %j with a message naming the problem", (argv, message) => {
    const error = configError(argv)
    expect(error.exitCode).toBe(2)
    expect(error.message).toContain(message)
  })

  it.each([
    [{ PORT: "http" }, '--port (PORT) must be an integer from 0 to 65535, got "http"'],
    [{ SCRYPT_N: "1000" }, 'SCRYPT_N must be a power of two from 2 to 1048576, got "1000"'],
    [{ SCRYPT_N: "1" }, "SCRYPT_N must be a power of two"],
    [{ SCRYPT_R: "0" }, 'SCRYPT_R must be an integer from 1 to 32, got "0"'],
    [{ SCRYPT_P: "x" }, 'SCRYPT_P must be an integer from 1 to 16, got "x"'],
    [{ STORE: "postgres" }, "--database-url (DATABASE_URL) is required with --store postgres"],
    [
      { RATE_LIMIT_CAPACITY: "1", RATE_LIMIT_REFILL_PER_SECOND: "1", RATE_LIMIT_STORE: "redis" },
      "--redis-url (REDIS_URL) is required with --rate-limit-store redis"
    ]
  ])("refuses the environment %j with a message naming the problem", (env, message) => {
    expect(configError([], env).message).toContain(message)
  })

  it("names every bad option at once", () => {
    const message = configError(["--port", "x", "--adapter", "y"], { SCRYPT_P: "0" }).message
    expect(message).toContain("--port (PORT)")
    expect(message).toContain("--adapter (ADAPTER)")
    expect(message).toContain("SCRYPT_P")
  })

  it("never echoes a database URL, which usually carries a password", () => {
    const error = configError(["--store", "postgres", "--database-url", "mysql://admin:s3cret-pw@db/x"])
    expect(error.message).toContain("--database-url (DATABASE_URL) must be a postgres:// or postgresql:// URL")
    expect(error.message).not.toContain("s3cret-pw")
  })

  it("never echoes a Redis URL, which may carry a password", () => {
    const error = configError([], { REDIS_URL: "https://:s3cret-pw@cache:6379" })
    expect(error.message).toBe("--redis-url (REDIS_URL) must be a redis:// or rediss:// URL")
  })

  it("warns when --database-url or --redis-url carries a password, naming the variable; not from the environment", () => {
    const warningsOf = (argv: ReadonlyArray<string>, env: Record<string, string> = {}) => {
      const parsed = parseConfig(argv, env)
      return parsed._tag === "Run" ? parsed.warnings : ["<help>"]
    }
    const withPasswords = [
      "--store",
      "postgres",
      "--database-url",
      "postgres://app:s3cret-pw@db/x",
      "--rate-limit-capacity",
      "5",
      "--rate-limit-refill-per-second",
      "1",
      "--rate-limit-store",
      "redis",
      "--redis-url",
      "redis://:s3cret-pw@cache:6379"
    ]
    expect(warningsOf(withPasswords)).toEqual([
      "--database-url carries a password: it shows in the process list; pass it in DATABASE_URL instead",
      "--redis-url carries a password: it shows in the process list; pass it in REDIS_URL instead"
    ])
    expect(warningsOf(["--store", "postgres", "--database-url", "postgres://app@db/x"])).toEqual([])
    expect(warningsOf(["--store", "postgres"], { DATABASE_URL: "postgres://app:s3cret-pw@db/x" })).toEqual([])
  })

  it("lists the rate limit options in the usage text", () => {
    for (const text of [
      "--rate-limit-store memory|postgres|redis",
      "RATE_LIMIT_STORE",
      "--redis-url URL",
      "(REDIS_URL)"
    ])
      expect(usage).toContain(text)
  })

  it("bounds database statements at 5 s unless told, from 100 ms to 10 minutes (docs/operations.md, Database timeouts)", () => {
    // The store's own default, written out in the config so that --help does not load the database drivers.
    expect(defaultConfig.databaseQueryTimeoutMs).toBe(DEFAULT_QUERY_TIMEOUT_MS)
    expect(run(["--database-query-timeout-ms", "1500"]).databaseQueryTimeoutMs).toBe(1500)
    expect(run([], { DATABASE_QUERY_TIMEOUT_MS: "600000" }).databaseQueryTimeoutMs).toBe(600_000)
    for (const value of ["0", "99", "600001", "5s"]) {
      expect(configError(["--database-query-timeout-ms", value]).message).toBe(
        `--database-query-timeout-ms (DATABASE_QUERY_TIMEOUT_MS) must be an integer from 100 to 600000, got "${value}"`
      )
    }
    expect(usage).toContain("--database-query-timeout-ms MS")
  })

  it("caches tokens for 5 s on the SQL stores unless told, 0 for no cache (docs/operations.md, Revoking a token)", () => {
    expect(defaultConfig.credentialCacheTtlMs).toBe(DEFAULT_CREDENTIAL_CACHE_TTL_MS)
    expect(run(["--credential-cache-ttl-ms", "0"]).credentialCacheTtlMs).toBe(0)
    expect(run([], { CREDENTIAL_CACHE_TTL_MS: "60000" }).credentialCacheTtlMs).toBe(60_000)
    expect(configError(["--credential-cache-ttl-ms", "60001"]).message).toBe(
      '--credential-cache-ttl-ms (CREDENTIAL_CACHE_TTL_MS) must be an integer from 0 to 60000, got "60001"'
    )
  })

  describe("--store pglite", () => {
    it("takes its data directory from --data-dir or DATA_DIR, the flag winning", () => {
      expect(run(["--store", "pglite", "--data-dir", "/var/lib/accord"])).toMatchObject({
        store: "pglite",
        dataDir: "/var/lib/accord"
      })
      expect(run([], { STORE: "pglite", DATA_DIR: "data" }).dataDir).toBe("data")
      expect(run(["--data-dir", "flag"], { STORE: "pglite", DATA_DIR: "env" }).dataDir).toBe("flag")
    })

    it.each([
      [
        ["--store", "pglite"],
        {},
        "--data-dir (DATA_DIR) is required with --store pglite: the directory the database is kept in"
      ],
      [["--data-dir", "data"], {}, "--data-dir (DATA_DIR) needs --store pglite: the memory store keeps nothing in it"],
      [
        [],
        { STORE: "postgres", DATABASE_URL: "postgres://db/x", DATA_DIR: "data" },
        "--data-dir (DATA_DIR) needs --store pglite: the postgres store keeps nothing in it"
      ],
      [["--store", "pglite", "--data-dir", ""], {}, '--data-dir (DATA_DIR) must not be empty, got ""'],
      [
        ["--store", "pglite", "--data-dir", "data", "--workers", "2"],
        {},
        "--workers (WORKERS) 2 needs --store postgres: one process at a time owns a PGlite data directory"
      ],
      [
        [
          "--store",
          "pglite",
          "--data-dir",
          "data",
          "--rate-limit-capacity",
          "5",
          "--rate-limit-refill-per-second",
          "1",
          "--rate-limit-store",
          "postgres"
        ],
        {},
        "--rate-limit-store (RATE_LIMIT_STORE) postgres needs --store postgres: the limit is kept in the store's database"
      ]
    ])("refuses %j %j (exit 2)", (argv, env, message) => {
      const error = configError(argv, env)
      expect(error.exitCode).toBe(2)
      expect(error.message).toBe(message)
    })
  })

  it("keeps the database URL redacted when printed", () => {
    const config = run([], { STORE: "postgres", DATABASE_URL: "postgresql://u:s3cret-pw@127.0.0.1/test" })
    expect(String(config.databaseUrl)).not.toContain("s3cret-pw")
    expect(JSON.stringify(config)).not.toContain("s3cret-pw")
  })

  describe("metrics", () => {
    it("are off by default", () => {
      expect(run([]).metrics).toBeUndefined()
      expect(run(["--host", "0.0.0.0"]).metrics).toBeUndefined()
    })

    it("listen on 127.0.0.1 whatever --host is, unless --metrics-host says otherwise", () => {
      expect(run(["--host", "0.0.0.0", "--metrics-port", "9464"]).metrics).toEqual({ host: "127.0.0.1", port: 9464 })
      expect(run(["--metrics-port", "0", "--metrics-host", "10.0.0.5"]).metrics).toEqual({ host: "10.0.0.5", port: 0 })
    })

    it("read METRICS_PORT and METRICS_HOST, a flag winning", () => {
      expect(run([], { METRICS_PORT: "9464", METRICS_HOST: "::1" }).metrics).toEqual({ host: "::1", port: 9464 })
      expect(run(["--metrics-port", "9465"], { METRICS_PORT: "9464" }).metrics).toEqual({
        host: "127.0.0.1",
        port: 9465
      })
    })

    it.each([
      [["--metrics-port", "70000"], '--metrics-port (METRICS_PORT) must be an integer from 0 to 65535, got "70000"'],
      [["--metrics-port", "x"], '--metrics-port (METRICS_PORT) must be an integer from 0 to 65535, got "x"'],
      [["--metrics-host", "0.0.0.0"], "--metrics-host (METRICS_HOST) needs --metrics-port (METRICS_PORT)"],
      [["--port", "3000", "--metrics-port", "3000"], "--metrics-port (METRICS_PORT) must differ from --port (PORT)"]
    ])("refuse %j", (argv, message) => {
      expect(configError(argv).message).toContain(message)
    })

    it("are in the usage text, with the private-network warning", () => {
      expect(usage).toContain("--metrics-port PORT")
      expect(usage).toContain("(METRICS_PORT, default off)")
      expect(usage).toContain("--metrics-host HOST")
      expect(usage).toContain("(METRICS_HOST, default 127.0.0.1")
      expect(usage).toContain("never expose them to clients")
    })

    it("may both pick a free port (0)", () => {
      expect(run(["--port", "0", "--metrics-port", "0"]).metrics).toEqual({ host: "127.0.0.1", port: 0 })
    })
  })

  describe("--workers (WORKERS)", () => {
    const postgres = ["--store", "postgres", "--database-url", "postgres://postgres@127.0.0.1:5432/test"]

    it("defaults to 1: no cluster", () => {
      expect(run([]).workers).toBe(1)
      expect(run(["--workers", "1"]).workers).toBe(1)
    })

    it("takes a count, from the flag or WORKERS, with the postgres store", () => {
      expect(run([...postgres, "--workers", "2"]).workers).toBe(2)
      expect(run(postgres, { WORKERS: "8" }).workers).toBe(8)
      expect(run([...postgres, "--workers", "3"], { WORKERS: "8" }).workers).toBe(3)
    })

    it("auto is one worker per core, as os.availableParallelism() counts them", () => {
      expect(run([...postgres, "--workers", "auto"]).workers).toBe(availableParallelism())
    })

    it.each([["0"], ["-1"], ["1.5"], ["two"], ["AUTO"], ["1025"], [""]])("refuses %j", (workers) => {
      const error = configError([...postgres, `--workers=${workers}`])
      expect(error.exitCode).toBe(2)
      expect(error.message).toBe(
        `--workers (WORKERS) must be auto or an integer from 1 to 1024, got ${JSON.stringify(workers)}`
      )
    })

    it("refuses more than one worker on the memory store: each would hold its own data (exit 2)", () => {
      const error = configError(["--workers", "2"])
      expect(error.exitCode).toBe(2)
      expect(error.message).toBe(
        "--workers (WORKERS) 2 needs --store postgres: with the memory store each worker would hold its own data"
      )
      expect(configError([], { WORKERS: "4", STORE: "memory" }).message).toContain("--workers (WORKERS) 4 needs")
    })

    it("refuses auto on the memory store when the machine has more than one core", () => {
      if (availableParallelism() === 1) expect(run(["--workers", "auto"]).workers).toBe(1)
      else
        expect(configError(["--workers", "auto"]).message).toBe(
          `--workers (WORKERS) auto (${availableParallelism()} cores) needs --store postgres: with the memory store each worker would hold its own data`
        )
    })
  })
})

describe("parseConfig: traces (docs/operations.md, Traces)", () => {
  it("is off without an OTLP endpoint, whatever else is set", () => {
    expect(run([], { OTEL_SERVICE_NAME: "api", OTEL_TRACES_SAMPLER: "always_on" }).tracing).toBeUndefined()
  })

  it("sends to the base endpoint's /v1/traces, as service accord, parent-based always on, by default", () => {
    expect(run([], { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }).tracing).toEqual({
      tracesUrl: "http://collector:4318/v1/traces",
      serviceName: "accord",
      sampler: "parentbased_always_on",
      samplerRatio: 1
    })
    expect(run([], { OTEL_EXPORTER_OTLP_ENDPOINT: "https://otlp.example.com/otel/" }).tracing?.tracesUrl).toBe(
      "https://otlp.example.com/otel/v1/traces"
    )
  })

  it("takes the traces endpoint as it is, the service name and the sampler", () => {
    const tracing = run([], {
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://traces:4318/custom",
      OTEL_SERVICE_NAME: "accord-eu",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25"
    }).tracing
    expect(tracing).toEqual({
      tracesUrl: "http://traces:4318/custom",
      serviceName: "accord-eu",
      sampler: "parentbased_traceidratio",
      samplerRatio: 0.25
    })
  })

  it("is off with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none", () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" }
    expect(run([], { ...endpoint, OTEL_SDK_DISABLED: "true" }).tracing).toBeUndefined()
    expect(run([], { ...endpoint, OTEL_TRACES_EXPORTER: "none" }).tracing).toBeUndefined()
    expect(run([], { ...endpoint, OTEL_TRACES_EXPORTER: "otlp", OTEL_SDK_DISABLED: "false" }).tracing).toBeDefined()
  })

  it("refuses a bad endpoint (without echoing it), sampler or ratio with exit code 2", () => {
    const error = configError([], {
      OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318/secret-key",
      OTEL_TRACES_SAMPLER: "sometimes",
      OTEL_TRACES_SAMPLER_ARG: "1.5",
      OTEL_TRACES_EXPORTER: "zipkin"
    })
    expect(error.exitCode).toBe(2)
    expect(error.message).toContain("OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL")
    expect(error.message).not.toContain("secret-key")
    expect(error.message).toContain("OTEL_TRACES_SAMPLER must be one of parentbased_always_on")
    expect(error.message).toContain("OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1")
    expect(error.message).toContain("OTEL_TRACES_EXPORTER must be one of otlp, none")
  })
})
