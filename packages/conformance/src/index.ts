export { runStoreContract } from "./store-contract.js"
export { runHttpConformance, type StartServer } from "./http-conformance.js"
export { rawClient, send, type RawClient, type RawRequest, type RawResponse } from "./raw-http.js"
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
export { startWith, type StartAdapter } from "./memory-server.js"
