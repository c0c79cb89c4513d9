// @accord/node/server: a standalone server, its options and types, `serve` (create, guard, drain, listen), and the
// parts it is made of: its limits, answers to malformed HTTP, listen and drain. Listed name by name: what is not here
// is internal.

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
