/** Why no answer of the API's could be had. */
export type TransportFailure =
  /** `fetch` rejected (connection refused or reset, DNS, CORS, aborted) or the body could not be read. */
  | "network"
  /** The `token` function threw or rejected. */
  | "token"
  /**
   * The answer is not one the operation can give: a status other than its success status with no problem body,
   * a success body that is not JSON (or, with `@accord/client/validated`, one its Schema does not decode), or a
   * problem whose code the operation cannot be answered with (e.g. an HTML page from a proxy, or a `baseUrl` that is
   * not an Accord API).
   */
  | "undecodable"

/**
 * No answer of the API's: what the promise flavour rejects with, and the Effect flavour's other failure (tagged
 * `"AccordTransportError"` for `Effect.catchTag`). A plain `Error`, not an effect `Data.TaggedError`: the light client
 * carries nothing of effect (README, "Bundle size").
 */
export class AccordTransportError extends Error {
  readonly _tag = "AccordTransportError"
  override readonly name = "AccordTransportError"
  readonly reason: TransportFailure
  /** The HTTP status, when a response arrived. */
  readonly status?: number

  constructor(fields: {
    readonly reason: TransportFailure
    readonly message: string
    readonly status?: number
    readonly cause?: unknown
  }) {
    super(fields.message, fields.cause === undefined ? undefined : { cause: fields.cause })
    this.reason = fields.reason
    if (fields.status !== undefined) this.status = fields.status
  }
}
