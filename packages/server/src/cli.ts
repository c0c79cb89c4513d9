import { constants } from "node:os"
import { onStopSignals } from "@accord/node/stop-signals"
import type { Logger } from "pino"
import { isClusterWorker, reportListening, runPrimary, type PrimaryService } from "./cluster.js"
import { ConfigError, parseConfig, usage } from "./config.js"
import { sharedStderr } from "./buffered-log.js"
import { createLogger, flushLogger, logRepeatedSignal } from "./logger.js"
import { shellParentWarning } from "./shell-parent.js"
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
 * The first SIGTERM/SIGINT drains (the adapter answers what it accepted, up to the drain limit), closes the store and
 * exits 0. Another within SIGNAL_REPEAT_WINDOW_MS is the same stop by another route (a group's signal that npm
 * forwards too) and changes nothing; one after that exits at once with the shell's 128 + signal number, except in a
 * cluster's worker, where the primary, which forwards its own, alone decides to end the drain early
 * (@accord/node/stop-signals).
 */
const handleSignals = (accord: RunningAccord, logger: Logger, inCluster: boolean): void => {
  onStopSignals({
    drain: (signal) => {
      logger.info({ signal }, "draining")
      accord.close().then(
        () => exitAfterFlush(logger, 0),
        (error: unknown) => {
          logger.error({ err: error }, "shutdown failed")
          return exitAfterFlush(logger, 1)
        }
      )
    },
    repeat: logRepeatedSignal(logger),
    force: (signal) => {
      if (inCluster) {
        logger.info({ signal }, "already draining")
        return
      }
      logger.warn({ signal }, "second signal, exiting without finishing the drain")
      void exitAfterFlush(logger, 128 + constants.signals[signal])
    }
  })
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
  const config = parsed.config
  const clustered = config.workers > 1
  const primary = clustered && !isClusterWorker()
  // The processes of a cluster share stderr: whole lines only (see sharedStderr).
  const logger = createLogger(config.logLevel, clustered ? sharedStderr() : undefined)
  const crash = (kind: string) => (error: unknown) => {
    logger.fatal({ err: error }, kind)
    void exitAfterFlush(logger, 1)
  }
  process.on("uncaughtException", crash("uncaught exception"))
  process.on("unhandledRejection", crash("unhandled rejection"))
  // Once per start: a cluster's workers parse the same command line as their primary.
  if (!isClusterWorker()) {
    for (const warning of parsed.warnings) logger.warn(warning)
    const shellParent = shellParentWarning()
    if (shellParent !== undefined) logger.warn(shellParent.fields, shellParent.message)
  }

  if (primary) {
    // Cluster-wide services, started once here before any worker: the memory rate limit the workers share, and the
    // metrics listener serving the sum of theirs (docs/operations.md, "Workers").
    const [{ startClusterRateLimitPrimary }, { serveClusterMetrics }] = await Promise.all([
      import("@accord/rate-limit"),
      import("./metrics.js")
    ])
    const sharedRateLimit = (): PrimaryService => {
      if (config.rateLimit?.store === "memory") startClusterRateLimitPrimary()
      return {}
    }
    const clusterMetrics = async (): Promise<PrimaryService> => {
      if (config.metrics === undefined) return {}
      const listener = await serveClusterMetrics(config.metrics)
      logger.info({ metricsUrl: listener.url }, "metrics listening")
      return { close: listener.close }
    }
    return exitAfterFlush(
      logger,
      await runPrimary(config, logger, { onPrimaryStart: [sharedRateLimit, clusterMetrics] })
    )
  }

  // A worker answers the primary's metrics requests from its first moments, not once it has started: a scrape during a
  // fork or a replacement would otherwise wait for it and fail (one registry a process: startAccord gets the same).
  if (clustered && config.metrics !== undefined) (await import("./metrics.js")).clusterWorkerRegistry()
  // Loaded only now, so --help and a bad flag answer without loading both web frameworks and both database drivers.
  const { startAccord, StartError } = await import("./start.js")
  let accord: RunningAccord
  try {
    // A worker of this cluster only: under another tool's cluster (pm2, say) with --workers 1 the process stands alone.
    accord = await startAccord(config, { logger, clustered })
  } catch (error) {
    await flushLogger(logger)
    return failStart(error, [StartError])
  }
  handleSignals(accord, logger, clustered)
  // The one line stdout carries (a cluster's primary prints it for its workers); scripts and tests read the port from it.
  if (clustered) reportListening(accord.url)
  else process.stdout.write(`listening on ${accord.url}\n`)
}

void main()
