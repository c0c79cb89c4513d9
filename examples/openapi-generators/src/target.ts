// What every generated client's calls share: where the server is, the credentials to send, and what a call gives back
// in a form the test compares across generators. Nothing here knows a generator.

/** A running Accord server and the seeded credentials the calls use. */
export interface Target {
  /** The API's base URL, e.g. `http://127.0.0.1:3000/api` (the document's server is the relative `/api`). */
  readonly baseUrl: string
  /** A user's token: the users and payments operations. */
  readonly userToken: string
  /** An application's token: it may create public plan entries. */
  readonly clientToken: string
  /** One of the user's payment methods. */
  readonly paymentMethodId: string
}

/** A success as the generated client returned it: the status and the parsed body. */
export interface Answer {
  readonly status: number
  readonly body: unknown
}

/** A refusal as the generated client returned it, its problem `code` (and field issues) read through its types. */
export interface Refusal {
  readonly status: number
  readonly code: string | undefined
  /** `pointer code` of each field issue, for a 400 validation_failed. */
  readonly fields: ReadonlyArray<string>
}

/** One generated client's calls against a target. */
export interface GeneratedClientCalls {
  /** One call per operation of the document, by operationId, each asking for its success. */
  readonly operations: Readonly<Record<string, () => Promise<Answer>>>
  /** PUT of a payment method the user does not have: 404 `not_found`. */
  readonly notFound: () => Promise<Refusal>
  /** A sign-up whose password is too short: 400 `validation_failed`, `/password too_short`. */
  readonly invalidBody: () => Promise<Refusal>
}

/** The `Authorization` header of a token. */
export const bearer = (token: string): { readonly Authorization: string } => ({ Authorization: `Bearer ${token}` })

/** The sign-up the calls send: valid, and an email that repeats harmlessly (a repeated sign-up is the same 201). */
export const SIGN_UP = { email: "Ada@Example.COM", password: "correct horse battery" } as const
