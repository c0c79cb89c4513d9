// The public surface of @accord/core, listed name by name: the transport-neutral HTTP pipeline that binds
// @accord/contract's operations to @accord/domain's use cases. What is not here is internal to the package. The domain
// (use cases, ports, values) is @accord/domain's, the API as data @accord/contract's: import them from there.

// The handler, its options and the neutral request and response every adapter translates
export {
  DEFAULT_BODY_LIMIT,
  DEFAULT_MAX_PATH_LENGTH,
  DEFAULT_PREFIX,
  makeEagerHttpHandler,
  makeHttpHandler
} from "./http/handler.js"
export type {
  AccordRuntime,
  BodyReadResult,
  DocsAssets,
  EagerHttpHandler,
  HeaderLookup,
  HeaderRecord,
  HttpHandler,
  HttpHandlerOptions,
  HttpHeaders,
  HttpRequest,
  HttpResponse,
  HttpTracing,
  RequestLog,
  StaticAsset,
  StaticAssetEncodings,
  EventStreamOptions,
  StreamedBody
} from "./http/types.js"

// The implementation map: each operation bound to what runs it
export { accordImplementations, accordStreamImplementations } from "./implementations.js"
export type {
  CallerOf,
  DeclaredErrorOf,
  Implementation,
  Implementations,
  InputOf,
  StreamedItem,
  StreamImplementation,
  StreamImplementations
} from "./http/implementation.js"
export {
  DEFAULT_HEARTBEAT_MS,
  DEFAULT_REREAD_MS,
  DEFAULT_STREAMS_PER_CREDENTIAL,
  DEFAULT_STREAMS_TOTAL,
  EVENT_STREAM_TYPE,
  eventBlock
} from "./http/event-stream.js"
export { negotiateStream } from "./http/accept.js"

// Problems, as the pipeline and @accord/node's own refusals make them
export { MAX_LISTED_FIELD_ISSUES, problem, problemBody, problemOf, type Problem } from "./http/problem.js"
export { isJsonObject, MAX_JSON_DEPTH, readJson, type JsonReadResult } from "./http/json-body.js"

// What hosts and adapters read of a request or plug into the pipeline
export { rateLimitHeaders, type RateLimiter, type RateLimitQuota } from "./http/rate-limit.js"
export type { AliasDates, DeprecatedCall, DeprecatedCallCredential } from "./http/deprecation.js"
export { KNOWN_HTTP_METHODS, methodLabel, OTHER_METHOD } from "./http/method-label.js"
export { headerValue } from "./http/header-value.js"
export { queryDecoderFor } from "./http/query.js"
