/**
 * The benchmarked users and requests, free of any Accord import so that the bare baselines and the peer servers
 * (bare-domain.ts, bare-servers.ts, peer-*.ts) load without @accord/core. fixtures.ts re-exports all of it.
 */

export const userId = (index: number): string => `u_${index}`
/** Tokens follow the token grammar of docs/api.md ("Authentication"); they protect nothing here, so they are simply derived from the index. */
export const userToken = (index: number): string => `bench_${index}_token`
export const paymentMethodIds = (index: number): readonly [string, string, string] => [
  `pm_${index}_a`,
  `pm_${index}_b`,
  `pm_${index}_c`
]

/** What the load generator sends: two requests per scenario, taken in turn, so every other request changes state. */
export interface Scenario {
  /** How options name it (`--scenarios language`). */
  readonly id: string
  readonly name: string
  readonly requests: ReadonlyArray<{ readonly path: string; readonly body: string }>
  /**
   * The users the requests go to, in turn across all connections (issue 36: writes spread); absent, user 0 alone: every
   * request writes one record, the hot record of fifty writers.
   */
  readonly users?: number
}

export const LANGUAGE_PATH = "/api/users/v1/preferences/language/"
export const PAYMENT_METHOD_PATH = (id: string): string => `/api/payments/v1/payment-methods/${id}/`

/** The benchmarked user is user 0; the others only make the store a realistic size. */
const languageRequests = [
  { path: LANGUAGE_PATH, body: '{"language":"en-US","timezone":60,"mfa_enabled":true}' },
  { path: LANGUAGE_PATH, body: '{"language":"fr","timezone":-120,"mfa_enabled":false}' }
]

/** The users `language-spread` writes, in turn: few enough that each user's record is written again and again. */
export const SPREAD_USERS = 500

export const scenarios: ReadonlyArray<Scenario> = [
  // One user's record (a hot record: every connection writes it).
  { id: "language", name: "PUT language", requests: languageRequests },
  // The same writes spread over users: what a hot record is compared with.
  { id: "language-spread", name: "PUT language spread", requests: languageRequests, users: SPREAD_USERS },
  {
    id: "payment-method",
    name: "PUT payment method",
    requests: [
      { path: PAYMENT_METHOD_PATH(paymentMethodIds(0)[0]), body: '{"is_default":true}' },
      { path: PAYMENT_METHOD_PATH(paymentMethodIds(0)[1]), body: "{}" }
    ]
  }
]

export const benchHeaders = {
  authorization: `Bearer ${userToken(0)}`,
  "content-type": "application/json"
} as const
