// The public surface of @accord/node, listed name by name: what is not here is internal to the package.

// The bridge between Node's request/response and the core's neutral ones, shared by the Node adapters.
export {
  closeIfBodyUnread,
  continueIfExpected,
  expectsContinue,
  makeNodeHttpHandler,
  requestPath,
  responsePayload,
  toHttpRequest
} from "./bridge.js"
export {
  answeredTimeout,
  bodyFullyReceived,
  markTimedOut,
  nodeBodyNow,
  nodeBodyReader,
  nodeRequestBodyReader
} from "./body-reader.js"

// A standalone server: its options and types, \`serve\` (create, guard, drain, listen), and the parts it is made of:
// its limits, answers to malformed HTTP, listen and drain.
export {
  serve,
  type ClientErrorLog,
  type RunningServer,
  type StandaloneApp,
  type StandaloneHandlerOptions,
  type StandaloneServerOptions
} from "./standalone.js"
export {
  answerClientError,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_HEADERS_TIMEOUT_MS,
  DEFAULT_HOST,
  DEFAULT_MAX_HEADER_SIZE,
  DEFAULT_PORT,
  DEFAULT_REQUEST_TIMEOUT_MS,
  drainOnClose,
  guardServer,
  makeDrainState,
  listen,
  MAX_UNANSWERED_PER_CONNECTION,
  nodeServerOptions,
  serverUrl,
  type DrainState,
  type ServerGuard
} from "./server.js"

// The PasswordHasher port on node:crypto's scrypt.
export {
  DEFAULT_SCRYPT_MAX_CONCURRENT,
  DEFAULT_SCRYPT_MAX_QUEUED,
  makeScryptHasher,
  productionScryptCost,
  ScryptPasswordHasherLive,
  testScryptCost,
  type ScryptHasherLoad,
  type ScryptHasherOptions
} from "./scrypt-hasher.js"

// Tokens stored and compared only as SHA-256 digests; also `@accord/node/token-digest`, which loads node:crypto
// alone (what the stores import: no bridge, no server).
export { digestsEqual, sameDigestBytes, tokenDigest, tokenDigestWithBytes } from "./token-digest.js"
