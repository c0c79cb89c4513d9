import { Effect } from "effect"
import { Unavailable } from "@accord/domain"

/** Socket errors that mean "the server cannot be reached now", not "the statement is wrong". */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EHOSTDOWN",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN"
])

/**
 * SQLSTATEs of a server that is going away or not taking connections: class 08 (connection exception), 57P01
 * admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300 too_many_connections.
 */
const isUnavailableSqlState = (code: string): boolean =>
  code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03" || code === "53300"

/** node-postgres reports a lost or never-made connection with plain Errors that carry no code, only these messages. */
const CONNECTION_MESSAGES = [
  /^Connection terminated/,
  /is not queryable$/,
  /^timeout exceeded when trying to connect$/,
  /^timeout expired$/,
  /^Query read timeout$/
]

const fieldOf = (error: object, key: "code" | "message" | "cause" | "errors"): unknown =>
  key in error ? (error as Record<typeof key, unknown>)[key] : undefined

/** True for failures of the connection itself (refused, reset, terminated, timed out), whatever wraps them. */
export const isConnectionError = (error: unknown, depth = 0): boolean => {
  if (typeof error !== "object" || error === null || depth > 4) return false
  const code = fieldOf(error, "code")
  if (
    typeof code === "string" &&
    (SOCKET_CODES.has(code) || (/^[0-9A-Z]{5}$/.test(code) && isUnavailableSqlState(code)))
  ) {
    return true
  }
  const message = fieldOf(error, "message")
  if (typeof message === "string" && CONNECTION_MESSAGES.some((pattern) => pattern.test(message))) return true
  // Node's happy-eyeballs connect fails with an AggregateError of one error per address tried.
  const errors = fieldOf(error, "errors")
  if (Array.isArray(errors) && errors.some((inner) => isConnectionError(inner, depth + 1))) return true
  return isConnectionError(fieldOf(error, "cause"), depth + 1)
}

/** The database did not answer a statement, or give a connection for it, within the query timeout. */
export class DatabaseTimeout extends Error {
  override readonly name = "DatabaseTimeout"
  constructor(readonly timeoutMs: number) {
    super(`the database did not answer within ${timeoutMs} ms`)
  }
}

/**
 * The server gave up on the statement itself: 57014 query_canceled (its statement_timeout), 25P03
 * idle_in_transaction_session_timeout. The database is there, but did not answer in time.
 */
const isServerTimeout = (error: unknown): boolean =>
  typeof error === "object" && error !== null && "code" in error && (error.code === "57014" || error.code === "25P03")

export const storeUnreachable = (cause: unknown): Unavailable =>
  new Unavailable({ reason: "store_unreachable", retryAfterSeconds: 1, cause })

/**
 * Out of room: SQLSTATE 53100 disk_full and 53200 out_of_memory (class 53, insufficient resources, whose 53300 is a
 * refused connection, above), and a file system's own ENOSPC and EDQUOT. PGlite reports its full disk as 53100 too
 * ("could not extend file ...: No space left on device"), at ERROR when a table cannot grow, at PANIC when the WAL
 * cannot (docs/operations.md, "The PGlite store").
 */
const FULL_CODES = new Set(["53000", "53100", "53200", "ENOSPC", "EDQUOT"])

/** True when the database, or the disk under it, has no room left for the statement, whatever wraps the error. */
export const isStoreFull = (error: unknown, depth = 0): boolean => {
  if (typeof error !== "object" || error === null || depth > 4) return false
  const code = fieldOf(error, "code")
  if (typeof code === "string" && FULL_CODES.has(code)) return true
  return isStoreFull(fieldOf(error, "cause"), depth + 1)
}

export const storeFull = (cause: unknown): Unavailable =>
  new Unavailable({ reason: "store_full", retryAfterSeconds: 1, cause })

/**
 * The one place a driver error is judged: an unreachable database, one that does not answer in time, or one with no
 * room left (a full disk: reported to `onStoreFull` as well, for the host's log) is Unavailable; anything else is a
 * bug (defect).
 */
export const fromDriverError = (
  error: unknown,
  onStoreFull?: (cause: unknown) => void
): Effect.Effect<never, Unavailable> => {
  if (isStoreFull(error)) {
    return Effect.andThen(
      Effect.sync(() => onStoreFull?.(error)),
      Effect.fail(storeFull(error))
    )
  }
  return error instanceof DatabaseTimeout || isServerTimeout(error) || isConnectionError(error)
    ? Effect.fail(storeUnreachable(error))
    : Effect.die(error)
}
