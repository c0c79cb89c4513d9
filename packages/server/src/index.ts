export {
  ConfigError,
  defaultConfig,
  parseConfig,
  usage,
  type AccordConfig,
  type LogLevel,
  type ParsedCommandLine,
  type ScryptCost,
  type TracesSampler,
  type TracingConfig
} from "./config.js"
export { createLogger, flushLogger, redactPaths, requestLogging } from "./logger.js"
export { parseSeed, readSeedFile, seedProblems } from "./seed-file.js"
export { startAccord, StartError, type RunningAccord, type StartOptions } from "./start.js"
