import type { OperationId } from "./operations.js"

/**
 * The area an operation belongs to: the OpenAPI document's tags, one section each on the API reference page (their
 * descriptions are in openapi.ts). The first path segment for the three SPEC areas; `service` for health.
 */
export type OperationTag = "plans" | "users" | "payments" | "service"

/** What the OpenAPI document says of an operation to a person. */
export interface OperationDocs {
  /** Its area: one OpenAPI tag. */
  readonly tag: OperationTag
  /** One line, the OpenAPI `summary`. */
  readonly summary: string
  /** What a caller needs to know beyond the summary (OpenAPI `description`, CommonMark); docs/api.md is the contract. */
  readonly description: string
}

/**
 * The text of each operation, by operationId: read by the OpenAPI generator only, so it stays out of a client's
 * bundle (packages/client/test/bundle.test.ts). Every operation has its entry, or this does not compile.
 */
export const OPERATION_DOCS: { readonly [Id in OperationId]: OperationDocs } = {
  createPublicPlanEntry: {
    tag: "plans",
    summary: "Create a public subscription plan entry",
    description:
      "Records a sign-up: `email` and `password`, both required, no other field. The email is trimmed and stored with its domain lower-cased; the password (8 to 128 characters) is stored only as a salted scrypt hash and is never returned (the response shows `********`). An email that already has an entry gets the same 201 and changes nothing. Any valid credential may call it, a user's or an application's. When the store is unreachable or password hashing is saturated, the answer is 503 with `Retry-After`."
  },
  getLanguagePreferences: {
    tag: "users",
    summary: "Read the user's language preferences",
    description:
      "The caller's preferences record; the first read creates it with the defaults (`language` `en`, `timezone` 0, `mfa_enabled` false). Needs a user credential (an application's is 403)."
  },
  updateLanguagePreferences: {
    tag: "users",
    summary: "Update the user's language preferences (merge)",
    description:
      "Sets each field the body has and keeps the others (`{}` changes nothing and returns the record). `language` is a BCP 47 tag, stored canonicalised (`EN-us` becomes `en-US`); `timezone` is minutes east of UTC, -720 to 840 in steps of 15; `mfa_enabled` is a JSON boolean. `id`, `created_at` and `updated_at` may be sent back as read and are ignored; any other field is 400. `updated_at` moves only when a value changes. Needs a user credential."
  },
  listPaymentMethods: {
    tag: "payments",
    summary: "List the user's payment methods, ordered by id",
    description:
      'Every payment method of the caller, as `{"data": [...]}`, ordered by id in code-point order; at most one has `is_default: true`. Needs a user credential.'
  },
  setDefaultPaymentMethod: {
    tag: "payments",
    summary: "Set one of the user's payment methods as the default",
    description:
      'Makes the method `{id}` the caller\'s default and the previous default (if any) not, atomically: a user never has two defaults. The body is optional: none, `{}` or `{"is_default": true}` (`false` is 400). An id that does not exist, belongs to another user or is not 1 to 100 characters of `[A-Za-z0-9_-]` is 404. Repeating it changes nothing and returns the same method. Needs a user credential.'
  },
  health: {
    tag: "service",
    summary: "Liveness of the service and its store",
    description:
      '`{"status": "ok"}` when the service can reach its store, else 503 with `Retry-After`. Needs no credential and ignores one sent; meant for load balancers and orchestrators.'
  },
  liveness: {
    tag: "service",
    summary: "Liveness probe: the process serves",
    description:
      '`{"status": "ok"}` whenever the process answers HTTP, also while it drains or while its store is unreachable: it never calls the store, so a database outage never gets healthy processes restarted. Needs no credential and ignores one sent; meant for an orchestrator\'s liveness probe.'
  },
  readiness: {
    tag: "service",
    summary: "Readiness probe: the process takes new requests",
    description:
      '`{"status": "ok"}` when the service can reach its store and is not shutting down; 503 with `Retry-After` while it drains (SIGTERM) or while the store is unreachable, so a load balancer sends new requests elsewhere. Needs no credential and ignores one sent; meant for load balancers and an orchestrator\'s readiness probe.'
  }
}
