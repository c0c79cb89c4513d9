import type { DeprecatedCall } from "@accord/core"
import type { Logger } from "pino"

/** How often, at most, a failing rate limit store is logged while it keeps failing. */
export const RATE_LIMIT_ERROR_LOG_INTERVAL_MS = 30_000

/** How often, at most, a sink's refused deliveries (and, apart, those given up) are logged while they go on. */
export const DELIVERY_LOG_INTERVAL_MS = 30_000

/** How often, at most, the calls of one deprecated path with one kind of credential are logged. */
export const DEPRECATED_CALL_LOG_INTERVAL_MS = 60_000

/** How often, at most, a store out of room (a full disk) is logged while it stays so. */
export const STORE_FULL_LOG_INTERVAL_MS = 30_000

/**
 * A line logged at `level` with `message` for each of repeated failures: the first at once, then at most one per
 * interval with the count of those not logged (`failuresNotLogged`), so an outage does not flood the log. Whether the
 * call logged.
 */
const throttledLine = (
  logger: Logger,
  level: "warn" | "error",
  message: string,
  intervalMs: number,
  now: () => number,
  notLoggedField = "failuresNotLogged"
): ((fields: Readonly<Record<string, unknown>>) => boolean) => {
  let loggedAt: number | undefined
  let notLogged = 0
  return (fields) => {
    const at = now()
    if (loggedAt !== undefined && at - loggedAt < intervalMs) {
      notLogged += 1
      return false
    }
    logger[level]({ ...fields, [notLoggedField]: notLogged }, message)
    loggedAt = at
    notLogged = 0
    return true
  }
}

/**
 * Repeated failures, logged by `throttledLine`. Only the failure's own words (`describe`), never the error object: no
 * URL, no stack, no statement parameters.
 */
const throttledFailureLogging = (
  logger: Logger,
  level: "warn" | "error",
  message: string,
  describe: (error: unknown) => string,
  intervalMs: number,
  now: () => number,
  fields: Readonly<Record<string, unknown>> = {}
): ((error: unknown) => boolean) => {
  const line = throttledLine(logger, level, message, intervalMs, now)
  return (error) => line({ error: describe(error), ...fields })
}

export const RATE_LIMIT_STORE_FAILED = "rate limit store failed; this process limits each credential by itself"
export const RATE_LIMIT_STORE_BACK = "rate limit store answers again; the shared limit applies"

/**
 * The rate limit store's failures, while this process limits each credential by itself (`localCapacity` per window;
 * docs/operations.md, "Rate limits"), throttled; and its return, logged (info) when the failure before it was, so
 * that the log tells when the process limited locally.
 */
export const rateLimitStoreLogging = (
  logger: Logger,
  describe: (error: unknown) => string,
  localCapacity: number,
  intervalMs = RATE_LIMIT_ERROR_LOG_INTERVAL_MS,
  now: () => number = () => performance.now()
): { readonly onError: (error: unknown) => void; readonly onRecover: (failedForMs: number) => void } => {
  const failed = throttledFailureLogging(logger, "error", RATE_LIMIT_STORE_FAILED, describe, intervalMs, now, {
    localCapacity
  })
  let failureLogged = false
  return {
    onError: (error) => {
      if (failed(error)) failureLogged = true
    },
    onRecover: (failedForMs) => {
      if (!failureLogged) return
      failureLogged = false
      logger.info({ failedForMs: Math.round(failedForMs) }, RATE_LIMIT_STORE_BACK)
    }
  }
}

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

/** What the log says of one refused delivery: never the event's data, the URL or the secret. */
export interface RefusalFields {
  readonly eventId: string
  readonly type: string
  readonly reason: string
  readonly attempts: number
}

/**
 * The relay's refusals, per sink (docs/operations.md, "Events"): `event delivery failed; retrying` and, apart,
 * `event delivery given up`, each at most once per interval with `failuresNotLogged`; and `event delivery recovered`
 * at the first delivery after a logged failure, with the failures since it. So a sink that keeps failing, or that
 * fails one attempt in two, writes at most three lines per interval.
 */
export const deliveryLogging = (
  logger: Logger,
  intervalMs = DELIVERY_LOG_INTERVAL_MS,
  now: () => number = () => performance.now()
): {
  readonly refused: (sink: string, refusal: RefusalFields, givenUp: boolean) => void
  readonly delivered: (sink: string) => void
} => {
  interface SinkLog {
    readonly retrying: ReturnType<typeof throttledLine>
    readonly givenUp: ReturnType<typeof throttledLine>
    /** Since the last failure line that was logged and not yet followed by a delivery: when, and failures since. */
    failing: { readonly since: number; failures: number } | undefined
  }
  const sinks = new Map<string, SinkLog>()
  const logOf = (sink: string): SinkLog => {
    let log = sinks.get(sink)
    if (log === undefined) {
      log = {
        retrying: throttledLine(logger, "warn", "event delivery failed; retrying", intervalMs, now),
        givenUp: throttledLine(logger, "warn", "event delivery given up", intervalMs, now),
        failing: undefined
      }
      sinks.set(sink, log)
    }
    return log
  }
  return {
    refused: (sink, refusal, givenUp) => {
      const log = logOf(sink)
      const logged = (givenUp ? log.givenUp : log.retrying)({ sink, ...refusal })
      if (log.failing !== undefined) log.failing.failures += 1
      else if (logged) log.failing = { since: now(), failures: 1 }
    },
    delivered: (sink) => {
      const log = sinks.get(sink)
      if (log?.failing === undefined) return
      logger.info(
        { sink, failures: log.failing.failures, failingForMs: Math.round(now() - log.failing.since) },
        "event delivery recovered"
      )
      log.failing = undefined
    }
  }
}

export const DEPRECATED_CALL_MESSAGE = "a deprecated path was called; its callers should move to its successor"

/**
 * Calls of deprecated paths (docs/api.md, "Versioning"), so an operator sees who still calls one before its sunset:
 * a warn line per route and kind of credential, the first at once, then at most one per interval with
 * `callsNotLogged`. Never the credential itself; the route is a template, the kinds a fixed set: the lines are bounded.
 */
export const deprecatedCallLogging = (
  logger: Logger,
  intervalMs = DEPRECATED_CALL_LOG_INTERVAL_MS,
  now: () => number = () => performance.now()
): ((call: DeprecatedCall) => void) => {
  const lines = new Map<string, ReturnType<typeof throttledLine>>()
  return (call) => {
    const key = `${call.route} ${call.credential}`
    let line = lines.get(key)
    if (line === undefined) {
      line = throttledLine(logger, "warn", DEPRECATED_CALL_MESSAGE, intervalMs, now, "callsNotLogged")
      lines.set(key, line)
    }
    line({ route: call.route, operationId: call.operationId, credential: call.credential, gone: call.gone })
  }
}
