import type { BodyReadResult, HttpRequest, HttpResponse } from "@accord/core"
import {
  answeredTimeout,
  closeIfBodyUnread,
  continueIfExpected,
  makeNodeHttpHandler,
  nodeBodyNow,
  requestPath,
  requestQuery,
  responsePayload,
  toHttpRequest
} from "@accord/node/bridge"
import { serve, type RunningServer, type StandaloneServerOptions } from "@accord/node/server"
import { getRequestListener, RequestError, type Http2Bindings, type HttpBindings } from "@hono/node-server"
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response"
import { IncomingMessage, type ServerResponse } from "node:http"
import { readFetchBody } from "./read-body.js"

const TIMED_OUT: BodyReadResult = { _tag: "TimedOut" }
const INTERNAL_ERROR: ResponseInit = { status: 500 }

/**
 * The fetch Request as the core's request, with the Node bridge's rules: the target as Node received it (`/api/./x`
 * stays that; the Request's URL would have resolved it); a body that came whole with the headers taken at once from
 * Node's buffer, as every Node server takes it (`nodeBodyNow`: the core then runs without a wait); any other body
 * read by the Request (`readFetchBody`), with `100 Continue` when the core first asks for it, and a read broken by
 * the server's 408 reported as TimedOut (docs/SECURITY.md, items 16 and 17).
 */
const fromIncoming = (request: Request, incoming: IncomingMessage, outgoing: ServerResponse): HttpRequest => ({
  method: request.method,
  path: requestPath(incoming.url ?? "/"),
  query: requestQuery(incoming.url ?? "/"),
  headers: request.headers,
  readBodyNow: nodeBodyNow(incoming, incoming),
  readBody: async (limit) => {
    continueIfExpected(incoming, outgoing)
    const result = await readFetchBody(request, limit)
    return result._tag === "Aborted" && answeredTimeout(incoming) ? TIMED_OUT : result
  }
})

/**
 * Writes the core's answer as the Node adapters do: its status, its headers in its order, then `content-length` for
 * a body (none for 204 and HEAD), header block and text body in one write. @hono/node-server is then told that the
 * answer is sent: a fetch Response would cost a web stream, a Headers and a copy of the headers back out of it.
 */
const writeResponse = (response: HttpResponse, outgoing: ServerResponse): Response => {
  const head: Array<string> = []
  for (const name in response.headers) head.push(name, response.headers[name] ?? "")
  const payload = responsePayload(response.body)
  if (payload !== undefined) head.push("content-length", String(Buffer.byteLength(payload)))
  outgoing.writeHead(response.status, head)
  outgoing.end(payload)
  return RESPONSE_ALREADY_SENT
}

/** Always true here (the server is `node:http`'s): how the types learn it. */
const isHttp1 = (env: HttpBindings | Http2Bindings): env is HttpBindings => env.incoming instanceof IncomingMessage

/**
 * The fetch adapter's translation of requests behind @hono/node-server's listener (its Request reads headers and
 * body straight from Node's), with the limits, answers to malformed HTTP and drain of the other standalone servers
 * (`serve` from `@accord/node/server`). `*`, a backslash in the path or a bad Host, which @hono/node-server cannot
 * make a URL of, reach the core through the Node bridge: every answer is Koa's and Fastify's, on the wire too.
 */
export const startFetchServer = (options: StandaloneServerOptions): Promise<RunningServer> =>
  serve(options, (handlerOptions) => {
    // Started a microtask after the request event, when Node has handed over the body that came with the headers.
    const handler = makeNodeHttpHandler(handlerOptions)
    const relay = async (request: HttpRequest, incoming: IncomingMessage, outgoing: ServerResponse) => {
      const response = await handler(request)
      closeIfBodyUnread(incoming, outgoing)
      return writeResponse(response, outgoing)
    }
    // The request being handed to the listener: when @hono/node-server cannot make a Request of it, its listener
    // calls the error handler synchronously, before it returns, and without the request.
    let arrivingIncoming: IncomingMessage | undefined
    let arrivingOutgoing: ServerResponse | undefined
    const listener = getRequestListener(
      (request, env) =>
        isHttp1(env)
          ? relay(fromIncoming(request, env.incoming, env.outgoing), env.incoming, env.outgoing)
          : new Response(null, INTERNAL_ERROR),
      {
        // Global Request and Response stay Node's own: a library's server does not replace them for the whole
        // process.
        overrideGlobalObjects: false,
        // A body left unread closes its connection after the answer (closeIfBodyUnread), as on every Node server: no
        // draining it on timers after each request (a body taken with nodeBodyNow has not signalled its end yet).
        autoCleanupIncoming: false,
        // Otherwise only a host callback (onResponse, onInternalError) that throws makes the handler reject: a bare
        // 500.
        errorHandler: (error) =>
          error instanceof RequestError && arrivingIncoming !== undefined && arrivingOutgoing !== undefined
            ? relay(
                toHttpRequest(arrivingIncoming, arrivingIncoming, arrivingOutgoing),
                arrivingIncoming,
                arrivingOutgoing
              )
            : new Response(null, INTERNAL_ERROR)
      }
    )
    return (incoming, outgoing) => {
      arrivingIncoming = incoming
      arrivingOutgoing = outgoing
      void listener(incoming, outgoing)
      arrivingIncoming = undefined
      arrivingOutgoing = undefined
    }
  })
