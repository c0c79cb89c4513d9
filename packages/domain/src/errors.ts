import { Data } from "effect"
import type { FieldIssue } from "./values/field-issue.js"

/** Input broke a field rule; one issue per field, sorted by pointer. */
export class ValidationError extends Data.TaggedError("ValidationError")<{
  readonly issues: ReadonlyArray<FieldIssue>
}> {}

/**
 * The resource does not exist or is not the caller's (the two are indistinguishable on purpose). `resource` says what
 * was looked for, for a log; no answer carries it.
 */
export class NotFound extends Data.TaggedError("NotFound")<{
  readonly resource: string
}> {}

/** No usable credential (`missing`) or a credential the authenticator does not accept (`invalid_token`). */
export class Unauthenticated extends Data.TaggedError("Unauthenticated")<{
  readonly reason: "missing" | "invalid_token"
}> {}

/** A valid credential without the right to this operation (a client on a user operation). */
export class InsufficientScope extends Data.TaggedError("InsufficientScope") {}

/**
 * A conditional write whose condition the current record does not meet (an HTTP If-Match), checked in the same atomic
 * step as the write: nothing changed.
 */
export class PreconditionFailed extends Data.TaggedError("PreconditionFailed") {}

/**
 * A dependency cannot serve now (store unreachable, store full: its disk or memory, store busy: a record's writers
 * queue past the wait, hashing saturated, the identity provider's key set cannot be fetched); the caller may retry
 * later.
 */
export class Unavailable extends Data.TaggedError("Unavailable")<{
  readonly reason:
    "store_unreachable" | "store_full" | "store_busy" | "hashing_saturated" | "identity_provider_unreachable"
  readonly retryAfterSeconds: number
  readonly cause?: unknown
}> {}

/** A page's cursor (`after`) that is not one of the caller's events (docs/api.md, "Events"). */
export class UnknownCursor extends Data.TaggedError("UnknownCursor") {}

export type DomainError =
  ValidationError | NotFound | Unauthenticated | InsufficientScope | PreconditionFailed | Unavailable | UnknownCursor
