/**
 * The `detail` of every problem the server answers (docs/api.md, "Errors"), one text per situation: core answers with
 * these, and the OpenAPI document's examples are made of them, so the two cannot drift apart. A detail never carries
 * what the client sent, except the transfer coding it named (a token, already checked against its grammar).
 */
export const PROBLEM_DETAILS = {
  bodyRequired: "A JSON body is required.",
  invalidBody: "The body must be a JSON object.",
  fieldsInvalid: "Some fields are invalid.",
  someFieldsListed: (count: number, listed: number) =>
    `${count} fields are invalid; the first ${listed} by pointer are listed.`,
  unauthenticated: "Send a credential: Authorization: Bearer <token>.",
  invalidToken: "The credential is malformed, unknown or expired.",
  insufficientScope: "This credential may not use this operation.",
  notFound: "No resource exists at this address.",
  methodNotAllowed: "This method is not allowed here; see the Allow header.",
  payloadTooLarge: (limit: number) => `The body is larger than ${limit} bytes.`,
  chunkExtensionsTooLarge: "The chunk extensions of the body are larger than the server accepts.",
  unsupportedMediaType: "The body must be sent as application/json (UTF-8).",
  transferCodingNotImplemented: (coding: string) =>
    `The transfer coding ${JSON.stringify(coding)} is not implemented; send the body as it is, or chunked.`,
  uriTooLong: (max: number) => `The path is longer than ${max} characters.`,
  rateLimited: "Too many requests with this credential; retry later.",
  preconditionFailed: "The resource has changed since the If-Match entity tag was read; read it again.",
  preconditionRequired: "This server requires If-Match with the entity tag of the version read (from its ETag).",
  unavailable: "The service cannot answer right now; retry later.",
  draining: "The service is shutting down and takes no new requests; retry later.",
  internal: "An unexpected error occurred.",
  badRequest: "The request is not valid HTTP/1.1.",
  requestTimeout: "The request did not arrive completely in time.",
  headersTooLarge: "The request line and headers are larger than the server accepts.",
  expectationFailed: "The server meets no expectation but 100-continue."
} as const
