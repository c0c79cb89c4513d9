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
}

export const LANGUAGE_PATH = "/api/users/v1/preferences/language/"
export const PAYMENT_METHOD_PATH = (id: string): string => `/api/payments/v1/payment-methods/${id}/`

/** The benchmarked user is user 0; the others only make the store a realistic size. */
export const scenarios: ReadonlyArray<Scenario> = [
  {
    id: "language",
    name: "PUT language",
    requests: [
      { path: LANGUAGE_PATH, body: '{"language":"en-US","timezone":60,"mfa_enabled":true}' },
      { path: LANGUAGE_PATH, body: '{"language":"fr","timezone":-120,"mfa_enabled":false}' }
    ]
  },
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
