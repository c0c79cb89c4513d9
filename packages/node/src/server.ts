import type { Server, ServerOptions, ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import {
  PROBLEM_CONTENT_TYPE,
  problemBody,
  problems,
  REASON_PHRASES,
  type Problem,
  type StandaloneServerOptions
} from "@accord/core"

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
    connectionsCheckingInterval: Math.max(10, Math.floor(shortest / 4))
  }
}

/** Node's refusals of bytes that are not (yet) a request it can hand over; anything else is a 400. */
const clientErrorProblems: Readonly<Record<string, () => Problem>> = {
  HPE_HEADER_OVERFLOW: problems.headersTooLarge,
  HPE_CHUNK_EXTENSIONS_OVERFLOW: problems.chunkExtensionsTooLarge,
  ERR_HTTP_REQUEST_TIMEOUT: problems.requestTimeout
}

/**
 * The whole response to a client error, as the handler would write it: the problem body and the common headers (no
 * request was read, so the request id is always a new one), then Date and `Connection: close` as Node adds them.
 */
export const clientErrorResponse = (problem: Problem): string => {
  const body = problemBody(problem)
  return [
    `HTTP/1.1 ${problem.status} ${REASON_PHRASES[problem.status] ?? ""}`,
    `content-type: ${PROBLEM_CONTENT_TYPE}`,
    "cache-control: no-store",
    "x-content-type-options: nosniff",
    `x-request-id: ${crypto.randomUUID()}`,
    `content-length: ${Buffer.byteLength(body)}`,
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
export const answerClientError = (error: Error & { code?: string }, socket: Socket): void => {
  if (error.code === "ECONNRESET" || socket.destroyed) return
  // As Node does: never write into a response that has already started on this connection.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  if (socket.writable && (inFlight === undefined || inFlight === null || !inFlight.headersSent)) {
    socket.write(clientErrorResponse((clientErrorProblems[error.code ?? ""] ?? problems.badRequest)()))
  }
  // Without the error (Node passes it): it is answered, and a request still waiting for its body must see a plain
  // close, or Koa's default error listener prints the timeout's stack to stderr.
  socket.destroy()
}

/**
 * Prepares `server` for a graceful close (install it before the server takes requests, it watches every one) and
 * returns `drain(timeoutMs)`: stop accepting, let every request on an accepted connection be answered, close each
 * connection as soon as it is idle, and at the deadline close whatever is left. Resolves once the server is closed.
 */
export const drainOnClose = (server: Server): ((timeoutMs?: number) => Promise<void>) => {
  let draining = false
  const pending = new Set<ServerResponse>()
  server.on("request", (_request, response) => {
    // Answers given while draining tell the client not to reuse the connection.
    if (draining) response.shouldKeepAlive = false
    pending.add(response)
    response.once("close", () => {
      pending.delete(response)
      if (draining) server.closeIdleConnections()
    })
  })
  return (timeoutMs = DEFAULT_DRAIN_TIMEOUT_MS) =>
    new Promise<void>((resolve, reject) => {
      draining = true
      for (const response of pending) if (!response.headersSent) response.shouldKeepAlive = false
      const deadline = setTimeout(() => server.closeAllConnections(), timeoutMs)
      server.close((error) => {
        clearTimeout(deadline)
        if (error !== undefined && (error as Error & { code?: string }).code !== "ERR_SERVER_NOT_RUNNING") reject(error)
        else resolve()
      })
      server.closeIdleConnections()
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
