import { makeNodeRelay } from "@accord/node/bridge"
import { serve, type RunningServer, type StandaloneServerOptions } from "@accord/node/server"
import { getRequestListener, RequestError, type Http2Bindings, type HttpBindings } from "@hono/node-server"
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response"
import { IncomingMessage, type ServerResponse } from "node:http"

const INTERNAL_ERROR: ResponseInit = { status: 500 }

/** Always true here (the server is `node:http`'s): how the types learn it. */
const isHttp1 = (env: HttpBindings | Http2Bindings): env is HttpBindings => env.incoming instanceof IncomingMessage

/**
 * The fetch adapter's server on Node: @hono/node-server's listener takes each request, and the core gets it with the
 * Node bridge's rules (`makeNodeRelay`): the target as Node received it (`/api/./x` stays that; the Request's URL
 * would have resolved it), Node's header record (a fetch `Headers` is built from Node's only when read, at a cost of
 * its own), a body that came whole with the headers taken at once from Node's buffer, any other read from Node's
 * stream with `100 Continue` when the core first asks for it and a read broken by the server's 408 reported as
 * TimedOut (docs/SECURITY.md, items 16 and 17); the answer written as the Node adapters write it, and
 * @hono/node-server told that it is sent (a fetch Response would cost a web stream, a Headers and a copy of the
 * headers back out of it). So every answer is Koa's and Fastify's, on the wire too. The limits, answers to malformed
 * HTTP and drain are those of the other standalone servers (`serve` from `@accord/node/server`).
 */
export const startFetchServer = (options: StandaloneServerOptions): Promise<RunningServer> =>
  serve(options, (handlerOptions) => {
    const relayNode = makeNodeRelay(handlerOptions)
    const relay = (incoming: IncomingMessage, outgoing: ServerResponse): Response => {
      relayNode(incoming, outgoing)
      return RESPONSE_ALREADY_SENT
    }
    // The request being handed to the listener: when @hono/node-server cannot make a Request of it (`*`, a backslash
    // in the path, a bad Host), its listener calls the error handler synchronously, before it returns, and without
    // the request.
    let arrivingIncoming: IncomingMessage | undefined
    let arrivingOutgoing: ServerResponse | undefined
    const listener = getRequestListener(
      (_request, env) => (isHttp1(env) ? relay(env.incoming, env.outgoing) : new Response(null, INTERNAL_ERROR)),
      {
        // Global Request and Response stay Node's own: a library's server does not replace them for the whole
        // process.
        overrideGlobalObjects: false,
        // A body left unread closes its connection after the answer (closeIfBodyUnread), as on every Node server: no
        // draining it on timers after each request (a body taken with nodeBodyNow has not signalled its end yet).
        autoCleanupIncoming: false,
        errorHandler: (error) =>
          error instanceof RequestError && arrivingIncoming !== undefined && arrivingOutgoing !== undefined
            ? relay(arrivingIncoming, arrivingOutgoing)
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
