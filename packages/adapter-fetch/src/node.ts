import {
  DEFAULT_PREFIX,
  makeHttpHandler,
  type HttpRequest,
  type HttpResponse,
  type RunningServer,
  type StandaloneServerOptions
} from "@accord/core"
import {
  answerClientError,
  closeIfBodyUnread,
  DEFAULT_HOST,
  DEFAULT_PORT,
  drainOnClose,
  listen,
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
  const handler = makeHttpHandler({ ...options, prefix: options.prefix ?? DEFAULT_PREFIX })
  const answer = async (request: HttpRequest, incoming: IncomingMessage, outgoing: ServerResponse) => {
    const response = await handler(request)
    closeIfBodyUnread(incoming, outgoing)
    return toFetchResponse(withContentLength(response))
  }
  const server = createServer(nodeServerOptions(options), (incoming, outgoing) => {
    // A listener per request (a closure, nothing more): its errorHandler, which createAdaptorServer has no option
    // for, needs this request's IncomingMessage.
    const listener = getRequestListener(
      (request) => answer(fromFetchRequest(request, requestPath(incoming.url ?? "/")), incoming, outgoing),
      {
        // Global Request and Response stay Node's own: a library's server does not replace them for the whole process.
        overrideGlobalObjects: false,
        // Only a host callback (onResponse, onInternalError) that throws makes the handler reject: a bare 500 then.
        errorHandler: (error) =>
          error instanceof RequestError
            ? answer(toHttpRequest(incoming), incoming, outgoing)
            : new Response(null, { status: 500 })
      }
    )
    void listener(incoming, outgoing)
  })
  server.on("clientError", answerClientError)
  const drain = drainOnClose(server)
  const url = await listen(server, options.host ?? DEFAULT_HOST, options.port ?? DEFAULT_PORT)
  return { url, close: () => drain(options.drainTimeoutMs) }
}
