// The public surface of @accord/conformance: the contract's audits (also at @accord/conformance/audits), the paths
// they take from the contract, and the raw transports they send with. No test runner: the project's own test
// machinery (store contract, vitest suites, parity, fuzz, proxies) is the private @accord/test-support.
export * from "./audits/index.js"
export { type Fetch, fetchSend } from "./fetch-send.js"
export {
  allowOnPathOf,
  apiPaths,
  operationAt,
  operationPath,
  paths,
  randomSuffix,
  randomToken,
  REQUEST_ID_PATTERN,
  TIMESTAMP_PATTERN,
  toAliasPath,
  withoutSlash,
  type ApiPaths,
  type PathArgs
} from "./paths.js"
export { MAX_RESPONSE_BYTES, rawClient, send, type RawClient, type RawRequest, type RawResponse } from "./raw-http.js"
export { http2Send, http2SendFields } from "./raw-http2.js"
export {
  DEFAULT_QUIET_MS,
  exchange,
  parseWire,
  refusesConnections,
  type ExchangeLimits,
  type Exchanged
} from "./raw-socket.js"
