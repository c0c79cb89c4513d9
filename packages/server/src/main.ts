#!/usr/bin/env node
import { constants } from "node:os"
import type { Logger } from "pino"
import { ConfigError, parseConfig, usage } from "./config.js"
import { createLogger, flushLogger } from "./logger.js"
import type { RunningAccord } from "./start.js"

/** Start failures are for a person at a terminal: plain text on stderr, no stack. */
const failStart = (error: unknown, known: ReadonlyArray<new (...args: never) => Error> = []): never => {
  const exitCode = error instanceof ConfigError ? error.exitCode : 1
  const expected = error instanceof ConfigError || known.some((type) => error instanceof type)
  const message = expected && error instanceof Error ? error.message : `cannot start: ${String(error)}`
  process.stderr.write(`accord: ${message}\n`)
  process.exit(exitCode)
}

const exitAfterFlush = async (logger: Logger, code: number): Promise<never> => {
  await flushLogger(logger)
  process.exit(code)
}

/**
 * First SIGTERM/SIGINT: drain (the adapter answers what it accepted, up to the drain limit), close the store,
 * exit 0. A second signal while draining exits at once with the shell's 128 + signal number.
 */
const handleSignals = (accord: RunningAccord, logger: Logger): void => {
  let draining = false
  const onSignal = (signal: "SIGTERM" | "SIGINT") => {
    if (draining) {
      logger.warn({ signal }, "second signal, exiting without finishing the drain")
      void exitAfterFlush(logger, 128 + constants.signals[signal])
      return
    }
    draining = true
    logger.info({ signal }, "draining")
    accord.close().then(
      () => exitAfterFlush(logger, 0),
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed")
        return exitAfterFlush(logger, 1)
      }
    )
  }
  process.on("SIGTERM", onSignal)
  process.on("SIGINT", onSignal)
}

const main = async (): Promise<void> => {
  let parsed
  try {
    parsed = parseConfig(process.argv.slice(2), process.env)
  } catch (error) {
    return failStart(error)
  }
  if (parsed._tag === "Help") {
    process.stdout.write(usage)
    return
  }
  const logger = createLogger(parsed.config.logLevel)
  const crash = (kind: string) => (error: unknown) => {
    logger.fatal({ err: error }, kind)
    void exitAfterFlush(logger, 1)
  }
  process.on("uncaughtException", crash("uncaught exception"))
  process.on("unhandledRejection", crash("unhandled rejection"))

  // Loaded only now, so --help and a bad flag answer without loading both web frameworks and both database drivers.
  const { startAccord, StartError } = await import("./start.js")
  let accord: RunningAccord
  try {
    accord = await startAccord(parsed.config, { logger })
  } catch (error) {
    await flushLogger(logger)
    return failStart(error, [StartError])
  }
  handleSignals(accord, logger)
  // The one line stdout carries; scripts and tests read the port from it.
  process.stdout.write(`listening on ${accord.url}\n`)
}

void main()
