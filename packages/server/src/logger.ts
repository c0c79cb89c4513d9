import { fstatSync, write, writeSync } from "node:fs"
import { pino, type DestinationStream, type Logger } from "pino"
import type { HttpHandlerOptions, RequestLog } from "@accord/core"
import type { ClientErrorLog, StandaloneServerOptions } from "@accord/node/server"
import type { LogLevel, LogRequests } from "./config.js"

/**
 * Defence in depth: nothing the server logs carries credentials (RequestLog has none, errors never quote a body),
 * but should a header, token, password or connection string ever reach a log call, pino censors it.
 */
export const redactPaths: ReadonlyArray<string> = [
  "authorization",
  "token",
  "password",
  "databaseUrl",
  "redisUrl",
  "*.authorization",
  "*.token",
  "*.password",
  "*.databaseUrl",
  "*.redisUrl",
  "headers.authorization",
  "*.headers.authorization",
  "*.*.authorization",
  "*.*.token",
  "*.*.password"
]

/** Log bytes held while stderr is slow; past it, new lines are dropped (and counted) rather than memory grown. */
export const MAX_BUFFERED_LOG_BYTES = 16 * 1024 * 1024

/** Lines are written once this many bytes wait (nginx's `access_log ... buffer=`)... */
export const LOG_BUFFER_BYTES = 64 * 1024

/** ...or once the first of them has waited this long (nginx's `flush=`). docs/operations.md, "Logs". */
export const LOG_FLUSH_INTERVAL_MS = 200

/** A write stderr cannot take yet (EAGAIN: a full non-blocking pipe) is tried again after this long. */
const RETRY_WRITE_AFTER_MS = 100

/** Linux's PIPE_BUF: a write to a pipe of at most this many bytes is never interleaved with another writer's. */
const PIPE_BUF = 4096

/** Logs whose lines an exit the flush did not see (`process.exit` elsewhere) still writes when it can. */
const openLogs = new Set<BufferedLog>()
let exitHookInstalled = false

/**
 * JSON lines on a file descriptor (stderr), batched: a line waits until LOG_BUFFER_BYTES are pending or for
 * `flushIntervalMs` (LOG_FLUSH_INTERVAL_MS), then the batch goes out in one asynchronous write (libuv's thread pool),
 * so a request costs neither a system call nor a thread pool round trip (one write per line was most of the 25 us a
 * request line cost). One write is in flight at a time; while stderr is slow, batches queue, up to
 * MAX_BUFFERED_LOG_BYTES in all, and lines past that are dropped and reported (`onDropped`) once stderr has taken the
 * queue. A write that fails (EPIPE: nobody reads stderr any more) loses its batch and never blocks.
 *
 * `maxWrite`: at most this many bytes a write, whole lines only (the processes of a cluster share one stderr); a
 * single longer line is written alone. Not sonic-boom (pino's destination): it measures all its pending text again
 * for every line it buffers, and its synchronous flush retries a failed write for ever.
 */
export class BufferedLog implements DestinationStream {
  /** Called, through the event loop, with the count of lines dropped since the last call, once stderr caught up. */
  onDropped: ((lines: number) => void) | undefined
  readonly #fd: number
  readonly #maxWrite: number
  readonly #flushIntervalMs: number
  #lines: Array<string> = []
  #lineBytes: Array<number> = []
  #pendingBytes = 0
  #timer: NodeJS.Timeout | undefined
  /** Batches handed to the file descriptor, in order; while `#writing`, the first is being written. */
  #batches: Array<Buffer> = []
  #batchBytes = 0
  #writing = false
  #dropped = 0
  #drained: Array<() => void> = []

  constructor(fd: number, options: { readonly maxWrite?: number; readonly flushIntervalMs?: number } = {}) {
    this.#fd = fd
    this.#maxWrite = options.maxWrite ?? Number.POSITIVE_INFINITY
    this.#flushIntervalMs = options.flushIntervalMs ?? LOG_FLUSH_INTERVAL_MS
    openLogs.add(this)
    if (!exitHookInstalled) {
      exitHookInstalled = true
      process.on("exit", () => {
        for (const log of openLogs) log.#writeAtExit()
      })
    }
  }

  write(line: string): void {
    const bytes = Buffer.byteLength(line)
    if (this.#pendingBytes + this.#batchBytes + bytes > MAX_BUFFERED_LOG_BYTES) {
      this.#dropped += 1
      return
    }
    this.#lines.push(line)
    this.#lineBytes.push(bytes)
    this.#pendingBytes += bytes
    if (this.#pendingBytes >= LOG_BUFFER_BYTES) this.#handOver()
    else this.#timer ??= setTimeout(this.#handOver, this.#flushIntervalMs).unref()
  }

  /** Writes what is pending; `callback` once stderr has taken everything (or refused it). pino's `logger.flush`. */
  flush(callback: () => void = () => undefined): void {
    this.#handOver()
    if (this.#writing) this.#drained.push(callback)
    else callback()
  }

  /** Starts writing the pending lines. */
  readonly #handOver = (): void => {
    this.#batchPending()
    if (!this.#writing) this.#writeNext()
  }

  /** The pending lines, as batches of whole lines of at most `#maxWrite` bytes each, joined to the queue. */
  #batchPending(): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    const lines = this.#lines
    if (lines.length === 0) return
    const sizes = this.#lineBytes
    this.#lines = []
    this.#lineBytes = []
    this.#pendingBytes = 0
    let first = 0
    let bytes = 0
    for (let index = 0; index < lines.length; index++) {
      const size = sizes[index] ?? 0
      if (index > first && bytes + size > this.#maxWrite) {
        this.#enqueue(lines.slice(first, index).join(""))
        first = index
        bytes = 0
      }
      bytes += size
    }
    this.#enqueue(first === 0 ? lines.join("") : lines.slice(first).join(""))
  }

  #enqueue(text: string): void {
    const batch = Buffer.from(text)
    this.#batches.push(batch)
    this.#batchBytes += batch.length
  }

  readonly #writeNext = (): void => {
    const batch = this.#batches[0]
    if (batch === undefined) {
      this.#writing = false
      this.#whenDrained()
      return
    }
    this.#writing = true
    write(this.#fd, batch, 0, batch.length, null, this.#written)
  }

  readonly #written = (error: NodeJS.ErrnoException | null, written: number): void => {
    if (error?.code === "EAGAIN") {
      setTimeout(this.#writeNext, RETRY_WRITE_AFTER_MS).unref()
      return
    }
    const batch = this.#batches[0]
    if (batch !== undefined) {
      // A failed write loses its batch; a partial one (a full pipe, outside a cluster) goes on from where it stopped.
      const done = error !== null ? batch.length : written
      this.#batchBytes -= done
      if (done < batch.length) this.#batches[0] = batch.subarray(done)
      else this.#batches.shift()
    }
    this.#writeNext()
  }

  #whenDrained(): void {
    const callbacks = this.#drained
    this.#drained = []
    for (const callback of callbacks) callback()
    if (this.#dropped > 0 && this.onDropped !== undefined) {
      const dropped = this.#dropped
      this.#dropped = 0
      this.onDropped(dropped)
    }
  }

  /**
   * At an exit no flush preceded (`process.exit` outside cli.ts: e.g. a cluster worker whose primary died), what is
   * still pending is written synchronously, only to a regular file and only when no write is in flight: a pipe or a
   * terminal may block a synchronous write for ever (a reader that stopped reading), and a process must always exit.
   */
  #writeAtExit(): void {
    if (this.#writing) return
    this.#batchPending()
    if (this.#batches.length === 0) return
    try {
      if (!fstatSync(this.#fd).isFile()) return
      for (const batch of this.#batches.splice(0)) writeSync(this.#fd, batch)
    } catch {
      // Nothing more can be done for these lines.
    }
  }
}

/** stderr, batched (BufferedLog); `flushLogger` empties it before the process exits. */
const stderrDestination = (): DestinationStream => new BufferedLog(2)

/**
 * stderr for a process of a cluster, whose processes all write to the one stderr: each write carries whole lines and
 * at most PIPE_BUF bytes, so that lines of two processes never mix; a single line longer than that (a stack trace) is
 * written alone, and a pipe may then interleave it with another process's line.
 */
export const sharedStderr = (): DestinationStream => new BufferedLog(2, { maxWrite: PIPE_BUF })

/** The loggers createLogger made, with their destination: their request lines skip pino (`requestLineWriter`). */
const ownDestinations = new WeakMap<Logger, DestinationStream>()

/**
 * JSON lines on stderr, so stdout carries only the "listening on" line. The destination batches its writes;
 * `flushLogger` empties it before the process exits.
 */
export const createLogger = (level: LogLevel, destination: DestinationStream = stderrDestination()): Logger => {
  const logger = pino(
    {
      name: "accord",
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: [...redactPaths], censor: "[redacted]" }
    },
    destination
  )
  ownDestinations.set(logger, destination)
  if (destination instanceof BufferedLog) {
    destination.onDropped = (lines) =>
      logger.warn({ droppedLines: lines, maxBufferedBytes: MAX_BUFFERED_LOG_BYTES }, "log lines dropped")
  }
  return logger
}

/** How long an exit waits for the log to be written: a stderr nobody reads any more never calls back. */
const FLUSH_LIMIT_MS = 1000

/**
 * Writes what is buffered; resolves at once when the destination has nothing pending or cannot flush, and after
 * `FLUSH_LIMIT_MS` at the latest (a closed pipe on stderr must not keep the process from exiting).
 */
export const flushLogger = (logger: Logger): Promise<void> =>
  new Promise((resolve) => {
    const limit = setTimeout(resolve, FLUSH_LIMIT_MS)
    const done = () => {
      clearTimeout(limit)
      resolve()
    }
    try {
      logger.flush(done)
    } catch {
      done()
    }
  })

/** One "request" line: the same keys, in this order, whoever answered (docs/SECURITY.md, item 16). */
interface RequestLine {
  readonly requestId: string
  readonly method: string | null
  readonly route: string | null
  readonly path: string | null
  readonly status: number
  readonly durationMs: number | null
  readonly traceId?: string
}

/** The `time` pino's isoTime writes, made once a second: `toISOString` per line cost more than the rest of it. */
let clockSecond = Number.NaN
let clockPrefix = ""
const isoTime = (): string => {
  const now = Date.now()
  const second = Math.floor(now / 1000)
  if (second !== clockSecond) {
    clockSecond = second
    const iso = new Date(second * 1000).toISOString()
    clockPrefix = iso.slice(0, iso.length - 4)
  }
  const ms = now - second * 1000
  return `${clockPrefix}${ms < 10 ? "00" : ms < 100 ? "0" : ""}${ms}Z`
}

const jsonString = (value: string | null): string => (value === null ? "null" : JSON.stringify(value))
const jsonNumber = (value: number | null): string => (value !== null && Number.isFinite(value) ? String(value) : "null")

/**
 * A duration as `jsonNumber` writes it, from integer arithmetic when it is kept to the microsecond (core rounds it so):
 * `String` of a fractional double still cost about 0.7 us a line under load (bench/remaining-costs.md). The same text,
 * since the shortest form of such a double is its decimal with at most three fraction digits, trailing zeros dropped.
 */
export const durationJson = (ms: number | null): string => {
  if (ms === null || !(ms >= 0 && ms < 1e9)) return jsonNumber(ms)
  const micros = Math.round(ms * 1000)
  if (micros / 1000 !== ms) return String(ms)
  const whole = Math.floor(micros / 1000)
  const fraction = micros - whole * 1000
  if (fraction === 0) return `${whole}`
  if (fraction % 100 === 0) return `${whole}.${fraction / 100}`
  if (fraction % 10 === 0) return `${whole}.${fraction < 100 ? "0" : ""}${fraction / 10}`
  return `${whole}.${fraction < 10 ? "00" : fraction < 100 ? "0" : ""}${fraction}`
}

/**
 * Writes a request line. For a logger of createLogger, straight to its destination, byte for byte what pino would
 * write but without its redaction (about 9 us a line with its fifteen paths): the record has a fixed shape, and none
 * of its fields can hold a secret (the path is masked in core, the request id checked against a pattern). For any
 * other pino logger (startAccord's `logger` option), through that logger and its own settings.
 */
const requestLineWriter = (logger: Logger): ((level: "info" | "warn", line: RequestLine) => void) => {
  const destination = ownDestinations.get(logger)
  // `,"pid":1,"hostname":"h","name":"accord"`: what pino writes after the time, as it wrote it once (pino.symbols;
  // `logger.bindings()` leaves pid and hostname out).
  const bindings: unknown = Reflect.get(logger, pino.symbols.chindingsSym)
  if (destination === undefined || typeof bindings !== "string") {
    return (level, line) => logger[level](line, "request")
  }
  const levelValues = logger.levels.values
  return (level, line) => {
    if (!logger.isLevelEnabled(level)) return
    destination.write(
      `{"level":${levelValues[level]},"time":"${isoTime()}"${bindings},"requestId":${JSON.stringify(line.requestId)}` +
        `,"method":${jsonString(line.method)},"route":${jsonString(line.route)},"path":${jsonString(line.path)}` +
        `,"status":${jsonNumber(line.status)},"durationMs":${durationJson(line.durationMs)}` +
        `${line.traceId === undefined ? "" : `,"traceId":${JSON.stringify(line.traceId)}`},"msg":"request"}\n`
    )
  }
}

/**
 * `--log-requests`: whether an answer of this status gets its line. Every 5xx does whatever the setting, since its
 * request id leads to the `internal error` line; `sample=N` keeps the first of every N others (a count, not a draw:
 * exactly one in N, at no cost).
 */
const requestLineFilter = (logRequests: LogRequests): ((status: number) => boolean) => {
  if (logRequests === "all") return () => true
  if (logRequests === "off") return (status) => status >= 500
  const every = logRequests.sample
  let skipNext = 0
  return (status) => {
    if (status >= 500) return true
    if (skipNext > 0) {
      skipNext -= 1
      return false
    }
    skipNext = every - 1
    return true
  }
}

export interface RequestLoggingOptions {
  /** Which answers get a request line (docs/operations.md, "Logs"); default all. */
  readonly logRequests?: LogRequests
}

/**
 * The hooks that write the "request" lines: one per answered request (the handler's `onResponse`) and one per refusal
 * the server answers before the handler (Node's 400/408/431, the guard's 417 and 400: `onClientError`, with `method`
 * and `durationMs` null when Node parsed no request; docs/SECURITY.md, item 16), at info level, a 5xx at warn; every
 * 500 with its request id (`onInternalError`). One filter for both, so `sample=N` counts every answer.
 */
export const requestLogging = (
  logger: Logger,
  options: RequestLoggingOptions = {}
): Pick<HttpHandlerOptions, "onResponse" | "onInternalError"> & Pick<StandaloneServerOptions, "onClientError"> => {
  const writeLine = requestLineWriter(logger)
  const logged = requestLineFilter(options.logRequests ?? "all")
  return {
    onResponse: (log: RequestLog) => {
      if (!logged(log.status)) return
      // Every line has the same keys: `route` null when nothing matched, `path` (masked: docs/SECURITY.md, item 16)
      // only then; `traceId` only when tracing (docs/operations.md, "Traces"): the line to look the request's trace up by.
      const line: RequestLine = {
        requestId: log.requestId,
        method: log.method,
        route: log.route ?? null,
        path: log.path ?? null,
        status: log.status,
        durationMs: log.durationMs,
        ...(log.traceId !== undefined && { traceId: log.traceId })
      }
      writeLine(log.status >= 500 ? "warn" : "info", line)
    },
    onInternalError: (requestId: string, cause: unknown) => {
      logger.error({ requestId, err: cause }, "internal error")
    },
    onClientError: (log: ClientErrorLog) => {
      if (!logged(log.status)) return
      writeLine("info", {
        requestId: log.requestId,
        method: log.method ?? null,
        route: null,
        path: null,
        status: log.status,
        durationMs: null
      })
    }
  }
}

/** Connection errors a framework reports outside any answer: a debug line, JSON like every other (never stderr text). */
export const connectionLogging = (
  logger: Logger
): Pick<StandaloneServerOptions, "onConnectionError" | "onDrainLimit" | "onUnreadConnectionClosed"> => ({
  onConnectionError: (error: unknown) => {
    logger.debug({ err: error }, "connection error")
  },
  onUnreadConnectionClosed: () => {
    logger.debug("closed a connection whose client left its answers unread")
  },
  // docs/operations.md, "Stopping": the drain limit cut requests off (a drain that ends by itself logs nothing here).
  onDrainLimit: (unanswered: number) => {
    logger.warn({ unanswered }, "drain limit reached; closing the connections still open")
  }
})

/** How often, at most, a failing rate limit store is logged while it keeps failing. */
export const RATE_LIMIT_ERROR_LOG_INTERVAL_MS = 30_000

/** How often, at most, a store out of room (a full disk) is logged while it stays so. */
export const STORE_FULL_LOG_INTERVAL_MS = 30_000

/**
 * Repeated failures, logged at `level` with `message`: the first at once, then at most one per interval with the count
 * of those not logged (`failuresNotLogged`), so an outage does not flood the log. Only the failure's own words
 * (`describe`), never the error object: no URL, no stack, no statement parameters.
 */
const throttledFailureLogging = (
  logger: Logger,
  level: "warn" | "error",
  message: string,
  describe: (error: unknown) => string,
  intervalMs: number,
  now: () => number
): ((error: unknown) => void) => {
  let loggedAt: number | undefined
  let notLogged = 0
  return (error) => {
    const at = now()
    if (loggedAt !== undefined && at - loggedAt < intervalMs) {
      notLogged += 1
      return
    }
    logger[level]({ error: describe(error), failuresNotLogged: notLogged }, message)
    loggedAt = at
    notLogged = 0
  }
}

/** The rate limit store's failures, while requests are served without the limit (docs/operations.md, "Rate limits"). */
export const rateLimitErrorLogging = (
  logger: Logger,
  describe: (error: unknown) => string,
  intervalMs = RATE_LIMIT_ERROR_LOG_INTERVAL_MS,
  now: () => number = () => performance.now()
): ((error: unknown) => void) =>
  throttledFailureLogging(
    logger,
    "error",
    "rate limit store failed; requests are served without the limit",
    describe,
    intervalMs,
    now
  )

/**
 * The statements a full store (its disk, or memory) failed, each answered 503 (docs/operations.md, "The PGlite
 * store"). PGlite's error object carries the statement's parameters (an email, a password hash): only its words.
 */
export const storeFullLogging = (
  logger: Logger,
  describe: (error: unknown) => string,
  intervalMs = STORE_FULL_LOG_INTERVAL_MS,
  now: () => number = () => performance.now()
): ((error: unknown) => void) =>
  throttledFailureLogging(
    logger,
    "warn",
    "the store has no room left; requests that need it answer 503 until it has",
    describe,
    intervalMs,
    now
  )
