import type { Logger } from "pino"

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
