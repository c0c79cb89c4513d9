import { pino, type DestinationStream, type Logger } from "pino"
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
  "*.authorization",
  "*.token",
  "*.password",
  "*.databaseUrl",
  "headers.authorization",
  "*.headers.authorization",
  "*.*.authorization",
  "*.*.token",
  "*.*.password"
]

/**
 * JSON lines on stderr, so stdout carries only the "listening on" line. The destination buffers (async writes);
 * `flushLogger` empties it before the process exits.
 */
export const createLogger = (
  level: LogLevel,
  destination: DestinationStream = pino.destination({ dest: 2, sync: false })
): Logger =>
  pino(
    {
      name: "accord",
      level,
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: [...redactPaths], censor: "[redacted]" }
    },
    destination
  )

/** Writes what is buffered; resolves at once when the destination has nothing pending or cannot flush. */
export const flushLogger = (logger: Logger): Promise<void> =>
  new Promise((resolve) => {
    try {
      logger.flush(() => resolve())
    } catch {
      resolve()
    }
  })

/** The handler's hooks, wired to the logger: one line per answered request, every 500 with its request id. */
export const requestLogging = (logger: Logger): Pick<HttpHandlerOptions, "onResponse" | "onInternalError"> => ({
  onResponse: (log: RequestLog) => {
    // `route` is null rather than absent when nothing matched, so every line has the same keys. The path itself is
    // not logged: clients put credentials in paths too (docs/SECURITY.md, "No password or token in logs").
    // `traceId` only when tracing (docs/operations.md, "Traces"): the line to look the request's trace up by.
    const line =
      log.traceId === undefined
        ? {
            requestId: log.requestId,
            method: log.method,
            route: log.route ?? null,
            status: log.status,
            durationMs: log.durationMs
          }
        : {
            requestId: log.requestId,
            method: log.method,
            route: log.route ?? null,
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
