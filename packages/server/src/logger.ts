import { pino, type DestinationStream, type Logger } from "pino"
import type { StandaloneServerOptions } from "@accord/node/server"
import { SIGNAL_REPEAT_WINDOW_MS, type StopSignal } from "@accord/node/stop-signals"
import { BufferedLog, MAX_BUFFERED_LOG_BYTES, stderrDestination } from "./buffered-log.js"
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

/** The loggers createLogger made, with their destination: their request lines skip pino (request-line.ts). */
const ownDestinations = new WeakMap<Logger, DestinationStream>()

/** The destination of a logger createLogger made; undefined for any other pino logger. */
export const ownDestination = (logger: Logger): DestinationStream | undefined => ownDestinations.get(logger)

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

export const REPEATED_SIGNAL_MESSAGE = `signal repeated within ${SIGNAL_REPEAT_WINDOW_MS / 1000} s, still draining`

/**
 * A stop signal within the window of the first (@accord/node/stop-signals): the same stop by another route, one info
 * line (a person who pressed Ctrl-C twice learns that a later one ends the drain).
 */
export const logRepeatedSignal =
  (logger: Logger) =>
  (signal: StopSignal, sinceFirstMs: number): void =>
    logger.info({ signal, sinceFirstMs: Math.round(sinceFirstMs) }, REPEATED_SIGNAL_MESSAGE)

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
