export { runStoreContract } from "./store-contract.js"
export { runHttpConformance, type StartServer } from "./http-conformance.js"
export { MAX_RESPONSE_BYTES, rawClient, send, type RawClient, type RawRequest, type RawResponse } from "./raw-http.js"
export { http2Send, http2SendFields } from "./raw-http2.js"
export { exchange, refusesConnections, type ExchangeLimits, type Exchanged } from "./raw-socket.js"
export { paths } from "./paths.js"
export {
  compareServers,
  comparable,
  makeParityFixture,
  parityCorpus,
  runCorpus,
  type ComparableResponse,
  type ParityCase,
  type ParityFixture
} from "./parity.js"
export { startOnRuntime, startWith, type StartAdapter, type StartWithOptions } from "./memory-server.js"
export { startTcpProxy, viaProxy, type TcpProxy } from "./tcp-proxy.js"
export { fillFileSystem, mountTmpfs, tmpfsUnavailable, type Tmpfs } from "./full-disk.js"
export { fuzzCase, makeFuzzFixture, type FuzzCase, type FuzzFixture } from "./fuzz/generators.js"
export { checkResponse, type FuzzModels } from "./fuzz/oracle.js"
export {
  keepAliveAgent,
  runFuzzBatch,
  runHttpFuzz,
  snapshotModels,
  type BatchOutcome,
  type HttpFuzzOptions
} from "./fuzz/runner.js"
