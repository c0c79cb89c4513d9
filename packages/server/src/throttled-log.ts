import type { Logger } from "pino"

/** How often, at most, a failing rate limit store is logged while it keeps failing. */
export const RATE_LIMIT_ERROR_LOG_INTERVAL_MS = 30_000

/** How often, at most, a store out of room (a full disk) is logged while it stays so. */
export const STORE_FULL_LOG_INTERVAL_MS = 30_000

/**
 * Repeated failures, logged at `level` with `message` and `fields`: the first at once, then at most one per interval
 * with the count of those not logged (`failuresNotLogged`), so an outage does not flood the log. Only the failure's
 * own words (`describe`), never the error object: no URL, no stack, no statement parameters. Returns whether it logged.
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
  let loggedAt: number | undefined
  let notLogged = 0
  return (error) => {
    const at = now()
    if (loggedAt !== undefined && at - loggedAt < intervalMs) {
      notLogged += 1
      return false
    }
    logger[level]({ error: describe(error), failuresNotLogged: notLogged, ...fields }, message)
    loggedAt = at
    notLogged = 0
    return true
  }
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
