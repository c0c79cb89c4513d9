import { pino, type DestinationStream, type Logger } from "pino"
import sonicBoom from "sonic-boom"
import type { ClientErrorLog, HttpHandlerOptions, RequestLog, StandaloneServerOptions } from "@accord/core"
import type { LogLevel } from "./config.js"

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

/** Log bytes held while stderr is slow; past it, lines are dropped rather than memory grown. */
const MAX_BUFFERED_LOG_BYTES = 16 * 1024 * 1024

/**
 * stderr, written asynchronously. Not `pino.destination()`: its exit hook flushes synchronously and, when nobody
 * reads stderr any more (EPIPE), retries the write forever (sonic-boom 4), so the process never exits whatever the
 * signal. Every exit flushes first instead (`flushLogger`, with a time limit); a failed write only loses its lines.
 */
const stderrDestination = (
  options: { readonly sync?: boolean; readonly maxWrite?: number } = {}
): DestinationStream => {
  // minLength 1 writes each line at once, as 0 would, but makes `flush(cb)` wait for the writes (0 calls back at once).
  const destination = new sonicBoom.SonicBoom({
    fd: 2,
    sync: options.sync ?? false,
    minLength: 1,
    maxLength: MAX_BUFFERED_LOG_BYTES,
    ...(options.maxWrite !== undefined && { maxWrite: options.maxWrite })
  })
  destination.on("error", () => undefined)
  return destination
}

/**
 * JSON lines on stderr, so stdout carries only the "listening on" line. The destination buffers (async writes);
 * `flushLogger` empties it before the process exits.
 */
export const createLogger = (level: LogLevel, destination: DestinationStream = stderrDestination()): Logger =>
  pino(
    {
      name: "accord",
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: [...redactPaths], censor: "[redacted]" }
    },
    destination
  )

/** Linux's PIPE_BUF: a write to a pipe of at most this many bytes is never interleaved with another writer's. */
const PIPE_BUF = 4096

/**
 * stderr for a process of a cluster, whose processes all write to the one stderr: each write carries whole lines and
 * at most PIPE_BUF bytes, so that lines of two processes never mix; a single line longer than that (a stack trace) is
 * written alone, and a pipe may then interleave it with another process's line.
 * `sync` for the primary, which writes little: its lines go out in order, the last ones before it exits.
 */
export const sharedStderr = (options: { readonly sync: boolean }): DestinationStream =>
  stderrDestination({ sync: options.sync, maxWrite: PIPE_BUF })

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

/** The handler's hooks, wired to the logger: one line per answered request, every 500 with its request id. */
export const requestLogging = (logger: Logger): Pick<HttpHandlerOptions, "onResponse" | "onInternalError"> => ({
  onResponse: (log: RequestLog) => {
    // Every line has the same keys: `route` null when nothing matched, `path` (masked: docs/SECURITY.md, item 16)
    // only then; `traceId` only when tracing (docs/operations.md, "Traces"): the line to look the request's trace up by.
    const line =
      log.traceId === undefined
        ? {
            requestId: log.requestId,
            method: log.method,
            route: log.route ?? null,
            path: log.path ?? null,
            status: log.status,
            durationMs: log.durationMs
          }
        : {
            requestId: log.requestId,
            method: log.method,
            route: log.route ?? null,
            path: log.path ?? null,
            status: log.status,
            durationMs: log.durationMs,
            traceId: log.traceId
          }
    if (log.status >= 500) logger.warn(line, "request")
    else logger.info(line, "request")
  },
  onInternalError: (requestId: string, cause: unknown) => {
    logger.error({ requestId, err: cause }, "internal error")
  }
})

/**
 * Refusals the server answers before the handler (Node's 400/408/431, the guard's 417 and 400): the same "request"
 * line, with `method` and `durationMs` null when Node parsed no request (docs/SECURITY.md, item 16).
 */
export const clientErrorLogging = (logger: Logger): Pick<StandaloneServerOptions, "onClientError"> => ({
  onClientError: (log: ClientErrorLog) => {
    logger.info(
      {
        requestId: log.requestId,
        method: log.method ?? null,
        route: null,
        path: null,
        status: log.status,
        durationMs: null
      },
      "request"
    )
  }
})

/** Connection errors a framework reports outside any answer: a debug line, JSON like every other (never stderr text). */
export const connectionLogging = (logger: Logger): Pick<StandaloneServerOptions, "onConnectionError"> => ({
  onConnectionError: (error: unknown) => {
    logger.debug({ err: error }, "connection error")
  }
})

/** How often, at most, a failing rate limit store is logged while it keeps failing. */
export const RATE_LIMIT_ERROR_LOG_INTERVAL_MS = 30_000

/**
 * The rate limit store's failures, while requests are served without the limit (docs/operations.md, "Rate limits"):
 * the first logged at once, then at most one line per interval with the count of those not logged, so an outage does
 * not flood the log. Only the failure's own words (`describe`), never the error object: no URL, no stack.
 */
export const rateLimitErrorLogging = (
  logger: Logger,
  describe: (error: unknown) => string,
  intervalMs = RATE_LIMIT_ERROR_LOG_INTERVAL_MS,
  now: () => number = () => performance.now()
): ((error: unknown) => void) => {
  let loggedAt: number | undefined
  let notLogged = 0
  return (error) => {
    const at = now()
    if (loggedAt !== undefined && at - loggedAt < intervalMs) {
      notLogged += 1
      return
    }
    logger.error(
      { error: describe(error), failuresNotLogged: notLogged },
      "rate limit store failed; requests are served without the limit"
    )
    loggedAt = at
    notLogged = 0
  }
}
