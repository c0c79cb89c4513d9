// @accord/test-support: the project's own test machinery (private, never published). The audits users run, and the
// raw transports, are @accord/conformance's; this package runs them as vitest suites and adds what needs more than a
// URL: servers started on a seeded store, the store contract, adapter parity, the HTTP fuzz, a TCP proxy, a full disk.
export { runStoreContract } from "./store-contract.js"
export { runHttpConformance, type StartServer } from "./http-conformance.js"
export { runEmbeddingSuite, type EmbeddingOptions } from "./embedding.js"
export { startOnRuntime, startWith, type StartAdapter, type StartWithOptions } from "./memory-server.js"
export {
  compareServers,
  comparable,
  makeParityFixture,
  parityCorpus,
  aliasParityCorpus,
  runCorpus,
  type ComparableResponse,
  type ParityCase,
  type ParityFixture
} from "./parity.js"
export { startTcpProxy, viaProxy, type TcpProxy } from "./tcp-proxy.js"
export { fillFileSystem, mountTmpfs, tmpfsUnavailable, type Tmpfs } from "./full-disk.js"
export { makeFuzzFixture, type FuzzFixture } from "./fuzz/fixture.js"
export type { FuzzCase } from "./fuzz/fuzz-case.js"
export { fuzzCase } from "./fuzz/generators.js"
export { checkResponse, judgeCase, type Judged, type Outcome } from "./fuzz/oracle.js"
export type { FuzzModels, UserModel } from "./fuzz/models.js"
export {
  keepAliveAgent,
  runFuzzBatch,
  runHttpFuzz,
  sampleFuzzCases,
  snapshotModels,
  type BatchOutcome,
  type HttpFuzzOptions
} from "./fuzz/runner.js"
export {
  runtimeWithPorts,
  stubPort,
  stubPorts,
  TEST_PRINCIPALS,
  tokenTableAuthenticator,
  type Missing,
  type PortParts
} from "./port-stubs.js"
