export { runStoreContract } from "./store-contract.js"
export { runHttpConformance, type StartServer } from "./http-conformance.js"
export { rawClient, send, type RawClient, type RawRequest, type RawResponse } from "./raw-http.js"
export { exchange, refusesConnections, type Exchanged } from "./raw-socket.js"
export { paths, reasonPhrases, withoutSlash } from "./paths.js"
export {
  compareServers,
  comparable,
  makeParityFixture,
  PARITY_HEADERS,
  parityCorpus,
  runCorpus,
  type ComparableResponse,
  type ParityCase,
  type ParityFixture
} from "./parity.js"
export { startOnRuntime, startWith, type StartAdapter, type StartWithOptions } from "./memory-server.js"
export { startTcpProxy, viaProxy, type TcpProxy } from "./tcp-proxy.js"
export {
  checkResponse,
  checkResult,
  comparableResult,
  DEFAULT_FUZZ_BATCH,
  DEFAULT_FUZZ_RUNS,
  DEFAULT_FUZZ_SEED,
  describeCase,
  expectedFor,
  fuzzCase,
  fuzzSettings,
  isWireMethod,
  keepAliveAgent,
  makeFuzzFixture,
  runFuzzBatch,
  runHttpFuzz,
  sendBatch,
  sendFuzzCase,
  snapshotModels,
  toRawRequest,
  type Actor,
  type BatchOutcome,
  type BodyVerdict,
  type Expected,
  type FuzzCase,
  type FuzzFixture,
  type FuzzModels,
  type FuzzResult,
  type FuzzSettings,
  type FuzzUser,
  type HttpFuzzOptions,
  type Target
} from "./fuzz.js"
