import {
  DEFAULT_PREFIX,
  makeHttpHandler,
  type HttpRequest,
  type HttpResponse,
  type RunningServer,
  type StandaloneServerOptions
} from "@accord/core"
import {
  answeredTimeout,
  closeIfBodyUnread,
  continueIfExpected,
  DEFAULT_HOST,
  DEFAULT_PORT,
  drainOnClose,
  guardServer,
  listen,
  makeDrainState,
  nodeServerOptions,
  requestPath,
  toHttpRequest
} from "@accord/node"
import { getRequestListener, RequestError } from "@hono/node-server"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { fromFetchRequest, toFetchResponse } from "./index.js"

/**
 * A fetch Response carries no length: the core knows it, so the server states it as Koa and Fastify do (without it
 * @hono/node-server reads a few chunks ahead to find the end, and otherwise answers chunked).
 */
const withContentLength = (response: HttpResponse): HttpResponse =>
  response.body === undefined
    ? response
    : { ...response, headers: { ...response.headers, "content-length": String(Buffer.byteLength(response.body)) } }

/**
 * The fetch handler's translation behind @hono/node-server, with the limits, answers to malformed HTTP and drain of
 * the other standalone servers (`@accord/node`). The core gets the request target as Node received it (`/api/./x`
 * stays that), and `*`, a backslash in the path or a bad Host, which @hono/node-server cannot make a URL of, reach it
 * through the Node bridge: so every answer is Koa's and Fastify's, header order aside (fetch's Headers sort names).
 */
export const startFetchServer = async (options: StandaloneServerOptions): Promise<RunningServer> => {
  const drainState = makeDrainState(options)
  const handler = makeHttpHandler({
    ...options,
    prefix: options.prefix ?? DEFAULT_PREFIX,
    isDraining: drainState.isDraining
  })
  const answer = async (request: HttpRequest, incoming: IncomingMessage, outgoing: ServerResponse) => {
    const response = await handler(request)
    closeIfBodyUnread(incoming, outgoing)
    return toFetchResponse(withContentLength(response))
  }
  /**
   * The fetch request with the Node bridge's body rules: `100 Continue` when the core first reads the body, and a
   * read broken by the server's 408 reported as TimedOut (docs/SECURITY.md, items 16 and 17).
   */
  const fromIncoming = (request: Request, incoming: IncomingMessage, outgoing: ServerResponse): HttpRequest => {
    const fetchRequest = fromFetchRequest(request, requestPath(incoming.url ?? "/"))
    const read = fetchRequest.readBody
    if (read === undefined) return fetchRequest
    return {
      ...fetchRequest,
      readBody: async (limit) => {
        continueIfExpected(incoming, outgoing)
        const result = await read(limit)
        return result._tag === "Aborted" && answeredTimeout(incoming) ? { _tag: "TimedOut" } : result
      }
    }
  }
  const server = createServer(nodeServerOptions(options))
  const { guard, clientError } = guardServer(server, options)
  server.on(
    "request",
    guard((incoming, outgoing) => {
      // A listener per request (a closure, nothing more): its errorHandler, which createAdaptorServer has no option
      // for, needs this request's IncomingMessage.
      const listener = getRequestListener(
        (request) => answer(fromIncoming(request, incoming, outgoing), incoming, outgoing),
        {
          // Global Request and Response stay Node's own: a library's server does not replace them for the whole process.
          overrideGlobalObjects: false,
          // Only a host callback (onResponse, onInternalError) that throws makes the handler reject: a bare 500 then.
          errorHandler: (error) =>
            error instanceof RequestError
              ? answer(toHttpRequest(incoming, incoming, outgoing), incoming, outgoing)
              : new Response(null, { status: 500 })
        }
      )
      void listener(incoming, outgoing)
    })
  )
  server.on("clientError", clientError)
  const drain = drainOnClose(server, drainState)
  const url = await listen(server, options.host ?? DEFAULT_HOST, options.port ?? DEFAULT_PORT)
  return { url, close: () => drain(options.drainTimeoutMs) }
}
