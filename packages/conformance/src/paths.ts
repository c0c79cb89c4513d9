import { randomBytes } from "node:crypto"

/** The contract's paths under a mount prefix (`/api` by default, `""` for the root): one place for every route. */
export const apiPaths = (prefix: string) => ({
  planEntries: `${prefix}/plans/v1/subscription-plans/public/`,
  preferences: `${prefix}/users/v1/preferences/language/`,
  paymentMethods: `${prefix}/payments/v1/payment-methods/`,
  paymentMethod: (id: string): string => `${prefix}/payments/v1/payment-methods/${id}/`,
  health: `${prefix}/health`,
  /** The liveness and readiness probes (docs/api.md, "Probes"). */
  live: `${prefix}/health/live`,
  ready: `${prefix}/health/ready`,
  openapi: `${prefix}/openapi.json`,
  docs: `${prefix}/docs`
})

export type ApiPaths = ReturnType<typeof apiPaths>

/** The contract's paths under the default mount prefix `/api`. */
export const paths: ApiPaths = apiPaths("/api")

/** The same path without its trailing slash (the contract serves both forms of the operation paths). */
export const withoutSlash = (path: string): string => (path.endsWith("/") ? path.slice(0, -1) : path)

/** RFC 9110 reason phrases, the contract's problem `title`. */
export const reasonPhrases: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  412: "Precondition Failed",
  413: "Content Too Large",
  415: "Unsupported Media Type",
  428: "Precondition Required",
  500: "Internal Server Error",
  503: "Service Unavailable"
}

/** Lower-case hex, safe in ids, emails and tokens; makes every run's rows its own on a shared database. */
export const randomSuffix = (bytes = 6): string => randomBytes(bytes).toString("hex")

/** A token in the contract's grammar (`[A-Za-z0-9._~+/-]{1,512}=*`), unique per call. */
export const randomToken = (label: string): string => `${label}.${randomBytes(24).toString("base64url")}`

export const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/
export const TIMESTAMP_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
