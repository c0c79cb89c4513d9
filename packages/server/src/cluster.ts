import cluster, { type Worker } from "node:cluster"
import { constants } from "node:os"
import { onStopSignals } from "@accord/node/stop-signals"
import type { Logger } from "pino"
import type { AccordConfig } from "./config.js"
import { logRepeatedSignal } from "./logger.js"

/**
 * `--workers N` (N > 1): a primary process that serves nothing itself and forks N workers, each running the usual
 * start on the one port (`node:cluster` hands them the connections). packages/server/README.md, "Workers".
 */

/** A replacement waits 100 ms, then twice as long after each failure in a row, at most 10 s. */
export const REPLACE_DELAY_MIN_MS = 100
export const REPLACE_DELAY_MAX_MS = 10_000
/** A worker that served this long before it died resets the back-off: its death is not part of a crash loop. */
export const STABLE_AFTER_MS = 30_000
/** Past the drain limit, the time workers get to close their stores before the primary kills them. */
export const STOP_GRACE_MS = 10_000

const LISTENING = "accord:listening"

interface ListeningMessage {
  readonly type: typeof LISTENING
  readonly url: string
}

const isListeningMessage = (message: unknown): message is ListeningMessage =>
  typeof message === "object" &&
  message !== null &&
  "type" in message &&
  message.type === LISTENING &&
  "url" in message &&
  typeof message.url === "string"

/** True in a process forked by the primary: it reports to the primary rather than printing the listening line. */
export const isClusterWorker = (): boolean => cluster.isWorker

/** A worker tells the primary it listens (the primary prints the one stdout line for the whole cluster). */
export const reportListening = (url: string): void => {
  const message: ListeningMessage = { type: LISTENING, url }
  process.send?.(message)
}

/** What a cluster-wide service started in the primary gets. */
export interface PrimaryContext {
  readonly config: AccordConfig
  readonly logger: Logger
}

/** A service the primary runs beside its workers, closed once every worker has exited. */
export interface PrimaryService {
  readonly close?: () => Promise<void>
}

export interface PrimaryOptions {
  /**
   * Cluster-wide services, started in order in the primary before the first worker is forked and closed in reverse
   * order after the last one exited: e.g. the master of a rate limiter shared by the workers, or the registry that
   * aggregates the workers' metrics and serves them. A hook that throws stops the start (exit 1).
   */
  readonly onPrimaryStart?: ReadonlyArray<(context: PrimaryContext) => PrimaryService | Promise<PrimaryService>>
}

interface WorkerState {
  readonly worker: Worker
  /** When it reported listening; undefined while it is starting. */
  listeningSince: number | undefined
}

const describeError = (error: unknown): string => (error instanceof Error ? error.message : String(error))

/** Resolves once the primary no longer routes connections to the worker (its IPC channel is closed). */
const disconnected = (worker: Worker): Promise<void> =>
  worker.isConnected() ? new Promise((resolve) => worker.once("disconnect", () => resolve())) : Promise.resolve()

/**
 * Runs the primary of a cluster of `config.workers` workers until it stops, and resolves with the exit code:
 * - prints `listening on URL` once, when the first worker listens; every worker must report the same URL;
 * - a worker that exits while the cluster runs is replaced after a back-off (REPLACE_DELAY_*), each logged;
 * - a worker that exits before any worker has listened stops the cluster with its exit code (1: e.g. the database is
 *   unreachable or the port taken; 2: a bad seed file), so a start that cannot work is not retried for ever;
 * - the first SIGTERM/SIGINT is forwarded to every worker, which drains; 0 once all have exited (1 if one failed to
 *   drain or had to be killed past the drain limit); a repeat within a second is the same stop (npm forwarding a
 *   group's signal), a signal after that kills them and exits with 128 + signal (@accord/node/stop-signals).
 */
export const runPrimary = async (
  config: AccordConfig,
  logger: Logger,
  options: PrimaryOptions = {}
): Promise<number> => {
  const services: Array<PrimaryService> = []
  const closeServices = async (): Promise<void> => {
    for (const service of services.reverse()) {
      try {
        await service.close?.()
      } catch (error) {
        logger.error({ err: error }, "cluster service failed to close")
      }
    }
  }
  try {
    for (const start of options.onPrimaryStart ?? []) services.push(await start({ config, logger }))
  } catch (error) {
    process.stderr.write(`accord: cannot start a cluster service: ${describeError(error)}\n`)
    await closeServices()
    return 1
  }

  const workers = new Map<number, WorkerState>()
  const replacements = new Set<NodeJS.Timeout>()
  let url: string | undefined
  let failuresInARow = 0
  let stopping: { exitCode: number } | undefined
  let finish: (code: number) => void = () => undefined
  const finished = new Promise<number>((resolve) => (finish = resolve))

  const fork = (replacing?: number): void => {
    const worker = cluster.fork()
    workers.set(worker.id, { worker, listeningSince: undefined })
    // A failed signal or message to a worker: logged, never an unhandled 'error' event that would end the primary.
    worker.on("error", (error: unknown) => logger.warn({ err: error, workerId: worker.id }, "worker error"))
    logger.info({ workerId: worker.id, workerPid: worker.process.pid, replacing }, "worker started")
  }

  let ended = false
  const stopped = async (): Promise<void> => {
    if (ended) return
    ended = true
    await closeServices()
    logger.info({ exitCode: stopping?.exitCode }, "stopped")
    finish(stopping?.exitCode ?? 0)
  }

  /** Forwards `signal` to every worker (those still starting have no handler yet and end at once). */
  const stop = (signal: NodeJS.Signals, exitCode: number): void => {
    stopping = { exitCode }
    for (const timer of replacements) clearTimeout(timer)
    replacements.clear()
    if (workers.size === 0) {
      void stopped()
      return
    }
    for (const { worker } of workers.values()) worker.process.kill(signal)
    const deadline = setTimeout(() => {
      logger.error({ workers: [...workers.keys()] }, "workers still running past the drain limit, killing them")
      if (stopping !== undefined) stopping.exitCode ||= 1
      for (const { worker } of workers.values()) worker.process.kill("SIGKILL")
    }, config.drainTimeoutMs + STOP_GRACE_MS)
    deadline.unref()
  }

  cluster.on("message", (worker, message: unknown) => {
    const state = workers.get(worker.id)
    if (state === undefined || !isListeningMessage(message)) return
    state.listeningSince = Date.now()
    logger.info({ workerId: worker.id, workerPid: worker.process.pid, url: message.url }, "worker listening")
    // A cluster that is stopping (a worker could not start, or a signal came) announces nothing.
    if (stopping !== undefined) return
    if (url === undefined) {
      url = message.url
      logger.info({ workers: config.workers, url, node: process.version }, "cluster listening")
      // The one line stdout carries, as without a cluster: scripts and tests read the port from it.
      process.stdout.write(`listening on ${url}\n`)
    } else if (message.url !== url) {
      // With --port 0 every worker gets the port the first one got, unless all of them had died in between.
      logger.error({ workerId: worker.id, url: message.url, expected: url }, "worker listening on another address")
    }
  })

  cluster.on("exit", (worker, code: number | null, signal: NodeJS.Signals | null) => {
    void disconnected(worker).then(() => {
      const state = workers.get(worker.id)
      workers.delete(worker.id)
      const exit = { workerId: worker.id, workerPid: worker.process.pid, code, signal }
      if (stopping !== undefined) {
        const drained = code === 0 || state?.listeningSince === undefined
        if (!drained) stopping.exitCode ||= 1
        logger.info(exit, "worker stopped")
        if (workers.size === 0) void stopped()
        return
      }
      if (url === undefined) {
        logger.error(exit, "worker could not start, stopping the cluster")
        stop("SIGTERM", code !== null && code !== 0 ? code : 1)
        return
      }
      const since = state?.listeningSince
      if (since !== undefined && Date.now() - since >= STABLE_AFTER_MS) failuresInARow = 0
      const delayMs = Math.min(REPLACE_DELAY_MIN_MS * 2 ** failuresInARow, REPLACE_DELAY_MAX_MS)
      failuresInARow++
      logger.warn({ ...exit, delayMs }, "worker exited, replacing it")
      const timer = setTimeout(() => {
        replacements.delete(timer)
        if (stopping === undefined) fork(worker.id)
      }, delayMs)
      replacements.add(timer)
    })
  })

  // The rule of a single process (@accord/node/stop-signals): a repeat within the window is the same stop.
  onStopSignals({
    drain: (signal) => {
      logger.info({ signal, workers: workers.size }, "draining")
      stop(signal, stopping?.exitCode ?? 0)
    },
    repeat: logRepeatedSignal(logger),
    force: (signal) => {
      logger.warn({ signal }, "second signal, killing the workers without finishing the drain")
      for (const { worker } of workers.values()) worker.process.kill("SIGKILL")
      finish(128 + constants.signals[signal])
    }
  })

  for (let index = 0; index < config.workers; index++) fork()
  return finished
}
