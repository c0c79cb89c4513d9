import { createServer, type RequestListener, type Server } from "node:http"
import { DEFAULT_PREFIX, type HttpHandlerOptions } from "@accord/core"
import {
  DEFAULT_HOST,
  DEFAULT_PORT,
  drainOnClose,
  guardServer,
  listen,
  makeDrainState,
  nodeServerOptions
} from "./server.js"

/**
 * A request a standalone server refused before the handler ran (malformed HTTP, headers too large, a timeout, an
 * expectation it cannot meet, a missing Host): one log line each, like `RequestLog` (docs/api.md, "Errors").
 */
export interface ClientErrorLog {
  readonly requestId: string
  /** Undefined when Node could not parse a request line. */
  readonly method: string | undefined
  readonly status: number
}

/** Options every adapter's standalone server factory takes. */
export interface StandaloneServerOptions extends HttpHandlerOptions {
  /** Default 127.0.0.1. */
  readonly host?: string
  /** Default 3000; 0 picks a free port. */
  readonly port?: number
  /** How long `close()` lets accepted requests finish before closing the rest, default 10000 ms. */
  readonly drainTimeoutMs?: number
  /** Request line plus headers, in bytes, default 16384; more is 431 `headers_too_large`. */
  readonly maxHeaderSize?: number
  /** Time to receive a whole request (headers and body), default 30000 ms, 0 for none; past it 408 `request_timeout`. */
  readonly requestTimeoutMs?: number
  /** Time to receive the headers, default 10000 ms (at most `requestTimeoutMs`), 0 for none; past it 408. */
  readonly headersTimeoutMs?: number
  /**
   * A connection error a framework reports outside any answer (a client gone mid-answer), for the host's log; the
   * server never writes it to stderr itself (docs/SECURITY.md, "Every log line is JSON").
   */
  readonly onConnectionError?: (error: unknown) => void
  /**
   * Called each time a connection is closed because its client left its answers unread for the request timeout
   * (docs/SECURITY.md, "Clients that never read their answers").
   */
  readonly onUnreadConnectionClosed?: () => void
  /**
   * Called when `close()` reaches `drainTimeoutMs` with requests still unanswered, with how many; those connections
   * are then closed. Never called when the drain ends by itself.
   */
  readonly onDrainLimit?: (unanswered: number) => void
  /** Every refusal the server answers itself, before the handler (docs/SECURITY.md, "Every refusal is logged"). */
  readonly onClientError?: (log: ClientErrorLog) => void
  /**
   * Most connections open at once, default 0 (no cap); past it a new connection is closed at once. Keep it below
   * the process's file descriptor limit (docs/SECURITY.md, "Clients that never read their answers").
   */
  readonly maxConnections?: number
}

/** A listening server. `close()` drains: stops accepting, answers what it accepted, then closes connections. */
export interface RunningServer {
  /** `http://HOST:PORT` with the actual port. */
  readonly url: string
  readonly close: () => Promise<void>
}

/** The handler options a standalone server's framework gets: the prefix settled, `isDraining` its drain's. */
export interface StandaloneHandlerOptions extends StandaloneServerOptions {
  readonly prefix: string
  readonly isDraining: () => boolean
}

/** What a framework hands `serve`: the listener the guard passes requests to, and what to close after the drain. */
export interface StandaloneApp {
  readonly listener: RequestListener
  readonly close?: () => Promise<void>
}

/**
 * A standalone server around a framework: a Node server with the standalone limits (`nodeServerOptions`), the guard
 * before the framework and its answers to malformed HTTP (`guardServer`), the drain on `close()` (`drainOnClose`,
 * whose state the handler's readiness probe reads), listening on `host` and `port`. `app` builds the framework from
 * the handler options (the prefix settled, `isDraining` set) and the server (for a framework that wants it, as
 * Fastify's `serverFactory` does), and returns its request listener, or that and what to close after the drain.
 */
export const serve = async (
  options: StandaloneServerOptions,
  app: (
    handlerOptions: StandaloneHandlerOptions,
    server: Server
  ) => RequestListener | StandaloneApp | Promise<RequestListener | StandaloneApp>
): Promise<RunningServer> => {
  const drainState = makeDrainState(options)
  // A host's own drain signal still ends the streams (docs/api.md, "Events"); so does this server's.
  const hostDrain = options.drainStarted
  const drainStarted =
    hostDrain === undefined
      ? drainState.drainStarted
      : Promise.race([drainState.drainStarted, Promise.resolve(hostDrain)])
  const handlerOptions = {
    ...options,
    prefix: options.prefix ?? DEFAULT_PREFIX,
    isDraining: drainState.isDraining,
    drainStarted
  }
  const server = createServer(nodeServerOptions(options))
  const { guard, clientError } = guardServer(server, options)
  const made = await app(handlerOptions, server)
  const { listener, close } = typeof made === "function" ? { listener: made, close: undefined } : made
  server.on("request", guard(listener))
  server.on("clientError", clientError)
  const drain = drainOnClose(server, drainState, options.onDrainLimit)
  const url = await listen(server, options.host ?? DEFAULT_HOST, options.port ?? DEFAULT_PORT)
  return {
    url,
    close: async () => {
      await drain(options.drainTimeoutMs)
      await close?.()
    }
  }
}
