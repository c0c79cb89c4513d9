import { pino, type Logger } from "pino"
import type { HttpHandlerOptions, RequestLog } from "@accord/core"
import type { ClientErrorLog, StandaloneServerOptions } from "@accord/node/server"
import type { LogRequests } from "./config.js"
import { ownDestination } from "./logger.js"

/** One "request" line: the same keys, in this order, whoever answered (docs/SECURITY.md, item 16). */
interface RequestLine {
  readonly requestId: string
  readonly method: string | null
  readonly route: string | null
  readonly path: string | null
  readonly status: number
  readonly durationMs: number | null
  readonly traceId?: string
}

/** The `time` pino's isoTime writes, made once a second: `toISOString` per line cost more than the rest of it. */
let clockSecond = Number.NaN
let clockPrefix = ""
const isoTime = (): string => {
  const now = Date.now()
  const second = Math.floor(now / 1000)
  if (second !== clockSecond) {
    clockSecond = second
    const iso = new Date(second * 1000).toISOString()
    clockPrefix = iso.slice(0, iso.length - 4)
  }
  const ms = now - second * 1000
  return `${clockPrefix}${ms < 10 ? "00" : ms < 100 ? "0" : ""}${ms}Z`
}

const jsonString = (value: string | null): string => (value === null ? "null" : JSON.stringify(value))
const jsonNumber = (value: number | null): string => (value !== null && Number.isFinite(value) ? String(value) : "null")

/**
 * A duration as `jsonNumber` writes it, from integer arithmetic when it is kept to the microsecond (core rounds it so):
 * `String` of a fractional double still cost about 0.7 us a line under load (bench/remaining-costs.md). The same text,
 * since the shortest form of such a double is its decimal with at most three fraction digits, trailing zeros dropped.
 */
export const durationJson = (ms: number | null): string => {
  if (ms === null || !(ms >= 0 && ms < 1e9)) return jsonNumber(ms)
  const micros = Math.round(ms * 1000)
  if (micros / 1000 !== ms) return String(ms)
  const whole = Math.floor(micros / 1000)
  const fraction = micros - whole * 1000
  if (fraction === 0) return `${whole}`
  if (fraction % 100 === 0) return `${whole}.${fraction / 100}`
  if (fraction % 10 === 0) return `${whole}.${fraction < 100 ? "0" : ""}${fraction / 10}`
  return `${whole}.${fraction < 10 ? "00" : fraction < 100 ? "0" : ""}${fraction}`
}

/** JSON strings of the values a request line repeats (route templates, methods): each written once, a bounded few. */
const MAX_REMEMBERED_STRINGS = 256
const rememberedJson = new Map<string, string>()
const jsonRemembered = (value: string | null): string => {
  if (value === null) return "null"
  let json = rememberedJson.get(value)
  if (json === undefined) {
    json = JSON.stringify(value)
    if (rememberedJson.size < MAX_REMEMBERED_STRINGS) rememberedJson.set(value, json)
  }
  return json
}

/**
 * Writes a request line. For a logger of createLogger, straight to its destination, byte for byte what pino would
 * write but without its redaction (about 9 us a line with its fifteen paths): the record has a fixed shape, and none
 * of its fields can hold a secret (the path is masked in core, the request id checked against a pattern). For any
 * other pino logger (startAccord's `logger` option), through that logger and its own settings. Route templates and
 * methods come from small sets (a method Node parsed, a route of the contract), so their JSON is written once.
 */
/** Writes one request line from its fields, in the line's order (positional: a line costs no record of its own). */
type LineWriter = (
  level: "info" | "warn",
  requestId: string,
  method: string | null,
  route: string | null,
  path: string | null,
  status: number,
  durationMs: number | null,
  traceId?: string
) => void

const requestLineWriter = (logger: Logger): LineWriter => {
  const destination = ownDestination(logger)
  // `,"pid":1,"hostname":"h","name":"accord"`: what pino writes after the time, as it wrote it once (pino.symbols;
  // `logger.bindings()` leaves pid and hostname out).
  const bindings: unknown = Reflect.get(logger, pino.symbols.chindingsSym)
  if (destination === undefined || typeof bindings !== "string") {
    return (level, requestId, method, route, path, status, durationMs, traceId) => {
      const line: RequestLine = { requestId, method, route, path, status, durationMs }
      logger[level](traceId === undefined ? line : { ...line, traceId }, "request")
    }
  }
  const levelValues = logger.levels.values
  const prefixes = {
    info: `{"level":${levelValues["info"]},"time":"`,
    warn: `{"level":${levelValues["warn"]},"time":"`
  }
  const afterTime = `"${bindings},"requestId":`
  return (level, requestId, method, route, path, status, durationMs, traceId) => {
    if (!logger.isLevelEnabled(level)) return
    destination.write(
      `${prefixes[level]}${isoTime()}${afterTime}${JSON.stringify(requestId)}` +
        `,"method":${jsonRemembered(method)},"route":${jsonRemembered(route)},"path":${jsonString(path)}` +
        `,"status":${jsonNumber(status)},"durationMs":${durationJson(durationMs)}` +
        `${traceId === undefined ? "" : `,"traceId":${JSON.stringify(traceId)}`},"msg":"request"}\n`
    )
  }
}

/**
 * `--log-requests`: whether an answer of this status gets its line. Every 5xx does whatever the setting, since its
 * request id leads to the `internal error` line; `sample=N` keeps the first of every N others (a count, not a draw:
 * exactly one in N, at no cost).
 */
const requestLineFilter = (logRequests: LogRequests): ((status: number) => boolean) => {
  if (logRequests === "all") return () => true
  if (logRequests === "off") return (status) => status >= 500
  const every = logRequests.sample
  let skipNext = 0
  return (status) => {
    if (status >= 500) return true
    if (skipNext > 0) {
      skipNext -= 1
      return false
    }
    skipNext = every - 1
    return true
  }
}

export interface RequestLoggingOptions {
  /** Which answers get a request line (docs/operations.md, "Logs"); default all. */
  readonly logRequests?: LogRequests
}

/**
 * The hooks that write the "request" lines: one per answered request (the handler's `onResponse`) and one per refusal
 * the server answers before the handler (Node's 400/408/431, the guard's 417 and 400: `onClientError`, with `method`
 * and `durationMs` null when Node parsed no request; docs/SECURITY.md, item 16), at info level, a 5xx at warn; every
 * 500 with its request id (`onInternalError`). One filter for both, so `sample=N` counts every answer.
 */
export const requestLogging = (
  logger: Logger,
  options: RequestLoggingOptions = {}
): Pick<HttpHandlerOptions, "onResponse" | "onInternalError"> & Pick<StandaloneServerOptions, "onClientError"> => {
  const writeLine = requestLineWriter(logger)
  const logged = requestLineFilter(options.logRequests ?? "all")
  return {
    onResponse: (log: RequestLog) => {
      if (!logged(log.status)) return
      // Every line has the same keys: `route` null when nothing matched, `path` (masked: docs/SECURITY.md, item 16)
      // only then; `traceId` only when tracing (docs/operations.md, "Traces"): the line to look the request's trace up by.
      writeLine(
        log.status >= 500 ? "warn" : "info",
        log.requestId,
        log.method,
        log.route ?? null,
        log.path ?? null,
        log.status,
        log.durationMs,
        log.traceId
      )
    },
    onInternalError: (requestId: string, cause: unknown) => {
      logger.error({ requestId, err: cause }, "internal error")
    },
    onClientError: (log: ClientErrorLog) => {
      if (!logged(log.status)) return
      writeLine("info", log.requestId, log.method ?? null, null, null, log.status, null)
    }
  }
}
