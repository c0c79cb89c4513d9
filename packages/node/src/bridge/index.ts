// @accord/node/bridge: a Node request to the core's neutral one and the neutral response back, what every Node
// adapter (and a host on plain node:http) is made of. Listed name by name: what is not here is internal.

export {
  closeIfBodyUnread,
  continueIfExpected,
  expectsContinue,
  makeNodeHttpHandler,
  makeNodeRelay,
  NodeHttpRequest,
  type NodeRelay,
  requestPath,
  requestQuery,
  responsePayload,
  toHttpRequest,
  writeNodeResponse
} from "./bridge.js"
export {
  answeredTimeout,
  bodyFullyReceived,
  markTimedOut,
  nodeBodyNow,
  nodeBodyReader,
  nodeRequestBodyReader,
  takeBodyNow
} from "./body-reader.js"
