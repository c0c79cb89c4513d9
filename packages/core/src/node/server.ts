import { STATUS_CODES, type Server, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"

/** CONTRACT "Drain": the default time accepted requests get to finish on close. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 10_000
export const DEFAULT_HOST = "127.0.0.1"
export const DEFAULT_PORT = 3000

const bare = (status: number): string => `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}\r\nConnection: close\r\n\r\n`
const clientErrorResponses: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: bare(431),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: bare(413),
  ERR_HTTP_REQUEST_TIMEOUT: bare(408)
}

/**
 * Node's own answer to bytes that are not HTTP (no request exists, so no route and no problem body), written out so
 * that every standalone server can install it: Fastify would otherwise answer with a JSON body of its own.
 */
export const answerClientError = (error: Error & { code?: string }, socket: Socket): void => {
  if (error.code === "ECONNRESET" || socket.destroyed) return
  // As Node does: never write into a response that has already started on this connection.
  const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  if (socket.writable && (inFlight === undefined || inFlight === null || !inFlight.headersSent)) {
    socket.write(clientErrorResponses[error.code ?? ""] ?? bare(400))
  }
  socket.destroy(error)
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
