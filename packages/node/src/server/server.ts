import type { IncomingMessage, RequestListener, Server, ServerOptions, ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { PROBLEM_CONTENT_TYPE, PROBLEMS, REASON_PHRASES } from "@accord/contract"
import { problem, problemBody, type HttpHandlerOptions, type Problem } from "@accord/core"
import { markTimedOut } from "../bridge/body-reader.js"
import { expectsContinue } from "../bridge/bridge.js"
import type { ClientErrorLog, StandaloneServerOptions } from "./standalone.js"

/** docs/api.md, "Precise rules" (drain): the default time accepted requests get to finish on close. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000
export const DEFAULT_HOST = "127.0.0.1"
export const DEFAULT_PORT = 3000
/** Node's own default, made explicit so that `node --max-http-header-size` cannot change it behind our back. */
export const DEFAULT_MAX_HEADER_SIZE = 16_384
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000

/**
 * `http.createServer` options for a standalone server's limits. Node refuses a headers timeout above the request
 * timeout, so an unset one is capped by it. Node looks for expired requests every `connectionsCheckingInterval`
 * (30 s by default, far coarser than the timeouts), so it is set to a fraction of the shortest one.
 */
export const nodeServerOptions = (options: StandaloneServerOptions): ServerOptions => {
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const headersTimeout =
    options.headersTimeoutMs ??
    (requestTimeout > 0 ? Math.min(DEFAULT_HEADERS_TIMEOUT_MS, requestTimeout) : DEFAULT_HEADERS_TIMEOUT_MS)
  const shortest = Math.min(...[requestTimeout, headersTimeout].filter((timeout) => timeout > 0), 4000)
  return {
    maxHeaderSize: options.maxHeaderSize ?? DEFAULT_MAX_HEADER_SIZE,
    requestTimeout,
    headersTimeout,
    connectionsCheckingInterval: Math.max(10, Math.floor(shortest / 4)),
    // A request without Host reaches the server's guard, which answers the core's 400 problem (Node's is bare).
    requireHostHeader: false
  }
}

/** Node's refusals of bytes that are not (yet) a request it can hand over; anything else is a 400. */
const clientErrorProblems: Readonly<Record<string, Problem>> = {
  HPE_HEADER_OVERFLOW: problem("headers_too_large"),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: problem("payload_too_large", PROBLEMS.payload_too_large.detail.chunkExtensions),
  ERR_HTTP_REQUEST_TIMEOUT: problem("request_timeout")
}
const BAD_REQUEST = problem("bad_request")
const EXPECTATION_FAILED = problem("expectation_failed")

/** The headers of a problem answered before the handler, in the handler's order (docs/api.md, "Headers on every response"). */
const problemHeaders = (requestId: string, body: string): Record<string, string> => ({
  "content-type": PROBLEM_CONTENT_TYPE,
  "cache-control": "no-store",
  "x-content-type-options": "nosniff",
  "x-request-id": requestId,
  "content-length": String(Buffer.byteLength(body))
})

/**
 * The whole response to a client error, as the handler would write it: the problem body and the common headers (no
 * request was read, so the request id is always a new one), then Date and `Connection: close` as Node adds them.
 */
export const clientErrorResponse = (problem: Problem, requestId: string = crypto.randomUUID()): string => {
  const body = problemBody(problem)
  return [
    `HTTP/1.1 ${problem.status} ${REASON_PHRASES[problem.status] ?? ""}`,
    ...Object.entries(problemHeaders(requestId, body)).map(([name, value]) => `${name}: ${value}`),
    `Date: ${new Date().toUTCString()}`,
    "Connection: close",
    "",
    body
  ].join("\r\n")
}

/**
 * The answer to bytes Node cannot hand over as a request (malformed HTTP, headers over the limit, a request that did
 * not arrive in time): a problem, then the connection is closed. Installed by every standalone server, so all of
 * them answer alike (Fastify would otherwise answer with a JSON body of its own).
 */
export const answerClientError = (
  error: Error & { code?: string },
  socket: Socket,
  onClientError?: (log: ClientErrorLog) => void
): void => {
  if (error.code === "ECONNRESET" || socket.destroyed) return
  // As Node does: never write into a response that has already started on this connection.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  const handled = inFlight === undefined || inFlight === null ? undefined : inFlight.req
  if (socket.writable && (inFlight === undefined || inFlight === null || !inFlight.headersSent)) {
    const refusal = clientErrorProblems[error.code ?? ""] ?? BAD_REQUEST
    const requestId = crypto.randomUUID()
    socket.write(clientErrorResponse(refusal, requestId))
    // A request the handler holds logs its own line, with this status (its body read reports TimedOut); any other
    // refusal has no request behind it and is logged here: one line per answer (docs/SECURITY.md, item 16).
    if (handled !== undefined && error.code === "ERR_HTTP_REQUEST_TIMEOUT") markTimedOut(handled)
    else if (handled === undefined) onClientError?.({ requestId, method: undefined, status: refusal.status })
  }
  // Without the error (Node passes it): it is answered, and a request still waiting for its body must see a plain
  // close, or Koa's default error listener prints the timeout's stack to stderr.
  socket.destroy()
}

/**
 * Unanswered requests one connection may have at once. Past it the client is pipelining without reading its
 * answers (a browser never has more than one): the connection is closed rather than each request's objects and
 * answer kept in memory (docs/SECURITY.md, "Clients that never read their answers").
 */
export const MAX_UNANSWERED_PER_CONNECTION = 64

/** What Node's HTTP parser calls with each request's headers (an internal of node:http, stable since Node 0.x). */
interface ParserWithIncoming {
  onIncoming?: (request: IncomingMessage & { upgrade: boolean }, keepAlive: boolean) => number
}

/**
 * llhttp's answer to a message's headers meaning "no body, and stop parsing this read" (HPE_PAUSED_UPGRADE, which
 * Node treats as success): the rest of what the client sent in that read is dropped, unparsed.
 */
const STOP_PARSING = 2

/**
 * Node parses a whole read (up to 64 KiB, ~1,400 pipelined GETs) before anything is answered, and every request past
 * the limit would still get its objects and, once the connection is closed, an error with a stack trace: 100 such
 * connections stalled the event loop for seconds. The parser's per-request callback is wrapped instead, so the first
 * request past the limit closes the connection and nothing after it in the read is parsed (docs/SECURITY.md, "Clients
 * that never read their answers"). Without the internals (another runtime), the guard's own count still closes it.
 */
const stopParsingPastLimit = (socket: Socket, unansweredOn: () => number): void => {
  const parser = (socket as Socket & { parser?: ParserWithIncoming | null }).parser
  const onIncoming = parser?.onIncoming
  if (parser === undefined || parser === null || onIncoming === undefined) return
  parser.onIncoming = (request, keepAlive) => {
    if (socket.destroyed) {
      request.upgrade = false
      return STOP_PARSING
    }
    if (unansweredOn() >= MAX_UNANSWERED_PER_CONNECTION) {
      socket.destroy()
      // Node would otherwise hand a refused request carrying `Upgrade:` to the server's upgrade listeners.
      request.upgrade = false
      return STOP_PARSING
    }
    return onIncoming(request, keepAlive)
  }
}

/** The answer to a request the guard refuses before the handler: the core's problem and common headers, then close. */
const refuse = (
  request: IncomingMessage,
  response: ServerResponse,
  problem: Problem,
  onClientError: ((log: ClientErrorLog) => void) | undefined
): void => {
  const body = problemBody(problem)
  const requestId = crypto.randomUUID()
  // The body (if any) is left unread: the connection must not be reused.
  response.shouldKeepAlive = false
  response.writeHead(problem.status, problemHeaders(requestId, body))
  response.end(request.method === "HEAD" ? undefined : body)
  onClientError?.({ requestId, method: request.method, status: problem.status })
}

export interface ServerGuard {
  /** Wraps the framework's request listener: install the result as the server's request listener. */
  readonly guard: (listener: RequestListener) => RequestListener
  /** The server's `clientError` listener (Fastify: `clientErrorHandler`). */
  readonly clientError: (error: Error & { code?: string }, socket: Socket) => void
}

/**
 * What every standalone server does before the framework sees a request (docs/SECURITY.md, items 16, 17 and 18):
 * - `Expect: 100-continue` is dispatched at once, with no `100 Continue`: the bridge sends it when the core reads the
 *   body (`continueIfExpected`); any other expectation is 417 `expectation_failed`, a request without Host 400.
 * - Node's own refusals (`answerClientError`) and the guard's are logged through `onClientError`.
 * - A connection with more than `MAX_UNANSWERED_PER_CONNECTION` unanswered requests is closed, and the rest of its
 *   read left unparsed (`stopParsingPastLimit`); one whose answers the client has not read for the request timeout
 *   (its output is stuck: `writableNeedDrain`) is closed too; at most `maxConnections` connections are open.
 */
export const guardServer = (
  server: Server,
  options: Pick<
    StandaloneServerOptions,
    "onClientError" | "maxConnections" | "requestTimeoutMs" | "onUnreadConnectionClosed"
  >
): ServerGuard => {
  const { onClientError, onUnreadConnectionClosed } = options
  if (options.maxConnections !== undefined && options.maxConnections > 0) server.maxConnections = options.maxConnections
  const requestTimeout = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS
  const stallLimitMs = requestTimeout > 0 ? requestTimeout : DEFAULT_REQUEST_TIMEOUT_MS
  // Dispatched like every other request (so that the drain sees it); the guard answers what is not 100-continue.
  const dispatch = (request: IncomingMessage, response: ServerResponse): void =>
    void server.emit("request", request, response)
  server.on("checkContinue", dispatch)
  server.on("checkExpectation", dispatch)
  const unanswered = new WeakMap<Socket, number>()
  const stalled = new WeakMap<Socket, NodeJS.Timeout>()
  server.on("connection", (socket: Socket) => stopParsingPastLimit(socket, () => unanswered.get(socket) ?? 0))
  /** After each answer: a socket whose output no longer drains gets the request timeout to resume reading. */
  const watchOutput = (socket: Socket): void => {
    if (socket.destroyed || !socket.writableNeedDrain || stalled.has(socket)) return
    const timer = setTimeout(() => {
      socket.destroy()
      onUnreadConnectionClosed?.()
    }, stallLimitMs).unref()
    stalled.set(socket, timer)
    socket.once("drain", () => {
      clearTimeout(timer)
      stalled.delete(socket)
    })
  }
  return {
    clientError: (error, socket) => answerClientError(error, socket, onClientError),
    guard: (listener) => (request, response) => {
      const socket = request.socket
      // The rest of a flood already parsed from a connection the guard closed: nobody is there to answer.
      if (socket.destroyed) return
      const count = (unanswered.get(socket) ?? 0) + 1
      // Where Node's parser could not be wrapped (stopParsingPastLimit), the same limit, one request later.
      if (count > MAX_UNANSWERED_PER_CONNECTION) {
        socket.destroy()
        return
      }
      unanswered.set(socket, count)
      response.once("finish", () => {
        unanswered.set(socket, (unanswered.get(socket) ?? 1) - 1)
        watchOutput(socket)
      })
      if (request.headers.expect !== undefined && !expectsContinue(request)) {
        refuse(request, response, EXPECTATION_FAILED, onClientError)
      } else if (request.headers.host === undefined && request.httpVersion === "1.1") {
        refuse(request, response, BAD_REQUEST, onClientError)
      } else {
        listener(request, response)
      }
    }
  }
}

/**
 * Whether a standalone server is draining, shared by its handler and its drain: `isDraining` is the handler's hook
 * (its readiness probe answers 503 while it is true), and `drainOnClose` calls `startDraining` as its drain begins.
 * A hook the host passed in its own options still counts (docs/api.md, "Probes").
 */
export interface DrainState {
  readonly isDraining: () => boolean
  readonly startDraining: () => void
  /** Settles as the drain starts, after `isDraining` turned true: open event streams end then. */
  readonly drainStarted: Promise<void>
}

export const makeDrainState = (options: Pick<HttpHandlerOptions, "isDraining" | "drainStarted"> = {}): DrainState => {
  let draining = false
  const host = options.isDraining
  let started = (): void => {}
  const drainStarted = new Promise<void>((resolve) => (started = resolve))
  return {
    isDraining: host === undefined ? () => draining : () => draining || host(),
    startDraining: () => {
      draining = true
      started()
    },
    drainStarted
  }
}

/**
 * Runs `then` once the event loop has passed a poll phase, so that whatever the kernel holds for a socket has been
 * read and parsed (two immediates: the first may run in the turn that is already past its poll phase).
 */
const afterNextRead = (then: () => void): void => void setImmediate(() => setImmediate(then))

/**
 * Prepares `server` for a graceful close (install it before the server takes requests, it watches every one) and
 * returns `drain(timeoutMs)`: mark `state` draining, stop accepting, let every request on an accepted connection be
 * answered, close each connection as soon as it is idle, and at the deadline close whatever is left, telling
 * `onDrainLimit` how many requests were still unanswered. Resolves once the server is closed.
 */
export const drainOnClose = (
  server: Server,
  state?: DrainState,
  onDrainLimit?: (unanswered: number) => void
): ((timeoutMs?: number) => Promise<void>) => {
  let draining = false
  const pending = new Set<ServerResponse>()
  /** The latest request of each connection: the one whose answer closes it during a drain. */
  const latest = new Map<Socket, ServerResponse>()
  /** Answers whose keep-alive the drain turned off (and may turn on again for a request pipelined after them). */
  const closedByDrain = new WeakSet<ServerResponse>()
  const closeAfter = (response: ServerResponse): void => {
    if (response.headersSent || !response.shouldKeepAlive) return
    response.shouldKeepAlive = false
    closedByDrain.add(response)
  }
  server.on("connection", (socket: Socket) => {
    socket.once("close", () => latest.delete(socket))
  })
  server.on("request", (request, response) => {
    const socket = request.socket
    // While draining, only the last request read from a connection answers `Connection: close`: on an earlier one it
    // would make Node drop the requests pipelined after it, unanswered (docs/SECURITY.md, item 29).
    const previous = latest.get(socket)
    if (draining && previous !== undefined && closedByDrain.has(previous) && !previous.headersSent) {
      previous.shouldKeepAlive = true
      closedByDrain.delete(previous)
    }
    if (draining) closeAfter(response)
    latest.set(socket, response)
    pending.add(response)
    response.once("close", () => {
      pending.delete(response)
      // Idle connections are closed only after the next read: Node parses a pipelined request once the one before it
      // is answered, so right now the connection may look idle with requests still to come.
      if (latest.get(socket) === response) latest.delete(socket)
      if (draining) afterNextRead(() => server.closeIdleConnections())
    })
  })
  return (timeoutMs = DEFAULT_DRAIN_TIMEOUT_MS) =>
    new Promise<void>((resolve, reject) => {
      draining = true
      state?.startDraining()
      for (const response of latest.values()) if (pending.has(response)) closeAfter(response)
      // A client that does not read its answers would hold the drain to its deadline: closed at once.
      for (const socket of latest.keys()) if (socket.writableNeedDrain) socket.destroy()
      // What the limit cuts off is told (`onDrainLimit`): a drain that ends by itself tells nothing, so a host and a
      // test know which way it ended without timing it.
      const deadline = setTimeout(() => {
        onDrainLimit?.(pending.size)
        server.closeAllConnections()
      }, timeoutMs)
      // Not closed in this turn: requests a client sent before the drain may still sit unread in the kernel (a busy
      // server reads a socket once per turn), and closing their "idle" connection now would reset them unanswered.
      // Once they are read, each is being answered, and only truly idle connections, and the listener, are closed.
      afterNextRead(() => {
        server.close((error) => {
          clearTimeout(deadline)
          if (error !== undefined && (error as Error & { code?: string }).code !== "ERR_SERVER_NOT_RUNNING")
            reject(error)
          else resolve()
        })
        server.closeIdleConnections()
      })
    })
}

/** `http://HOST:PORT` of a listening server, with the port it actually got. */
export const serverUrl = (server: Server): string => {
  const address = server.address() as AddressInfo
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address
  return `http://${host}:${address.port}`
}

/** Listens on host and port (0 picks a free one) and resolves with the server's URL. */
export const listen = (server: Server, host: string, port: number): Promise<string> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, host, () => {
      server.off("error", reject)
      resolve(serverUrl(server))
    })
  })
