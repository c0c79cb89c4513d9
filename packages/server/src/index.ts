export {
  ConfigError,
  defaultConfig,
  parseConfig,
  usage,
  DEFAULT_METRICS_HOST,
  type AccordConfig,
  type LogLevel,
  type LogRequests,
  type ParsedCommandLine,
  type ScryptCost,
  type ServerOptionValues,
  type TracesSampler,
  type TracingConfig
} from "./config.js"
export { serverOptions } from "./options.js"
export { webhookSink, type WebhookSinkOptions } from "./events.js"
export { createLogger, flushLogger, redactPaths } from "./logger.js"
export { requestLogging, type RequestLoggingOptions } from "./request-line.js"
export {
  clusterWorkerRegistry,
  createMetrics,
  DURATION_BUCKETS,
  serveClusterMetrics,
  serveMetrics,
  UNMATCHED_ROUTE,
  withMetrics,
  type AccordMetrics,
  type MetricsHooks,
  type MetricsListener,
  type MetricsListenOptions
} from "./metrics.js"
export { parseSeed, readSeedFile, seedProblems } from "./seed-file.js"
export { startAccord, StartError, type RunningAccord, type StartOptions } from "./start.js"
