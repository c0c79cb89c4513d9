import type { HttpHandler, HttpHandlerOptions } from "@accord/core"
import {
  closeIfBodyUnread,
  makeNodeHttpHandler,
  makeNodeRelay,
  responsePayload,
  toHttpRequest,
  writeNodeResponse,
  type NodeRelay
} from "@accord/node/bridge"
import { serve, type RunningServer, type StandaloneServerOptions } from "@accord/node/server"
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyPluginAsync,
  type FastifyReply,
  type FastifyRequest,
  type RawServerBase
} from "fastify"
import type { RequestListener } from "node:http"
import { Readable } from "node:stream"

/** Everything `makeHttpHandler` takes except the prefix, which is the one the plugin is registered with. */
export type AccordPluginOptions = Omit<HttpHandlerOptions, "prefix">

/** What a request the core answers goes to: the plugin's `relay`, or the standalone server's raw one. */
type ToCore = (request: FastifyRequest, reply: FastifyReply) => unknown

/** The payload stream the catch-all parser handed over (after any host preParsing hook); unparsed requests have none. */
const bodyOf = (request: FastifyRequest): Readable => (request.body instanceof Readable ? request.body : request.raw)

/**
 * Relays the request to the core and its response back verbatim through Fastify's reply, so that a host's own hooks
 * (onSend, onResponse) still see it.
 */
const relay = async (handler: HttpHandler, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
  const response = await handler(toHttpRequest(request.raw, bodyOf(request), reply.raw))
  if (response.stream !== undefined) {
    // An event stream is written on Node's response as it comes: Fastify's reply (and a host's compression) would
    // buffer it (docs/api.md, "Events").
    reply.hijack()
    writeNodeResponse(request.raw, reply.raw, response)
    return reply
  }
  closeIfBodyUnread(request.raw, reply.raw)
  return reply.code(response.status).headers(response.headers).send(responsePayload(response.body))
}

/**
 * The standalone server's relay: Fastify routes the request and hands it over; the core's answer is written on Node's
 * response itself (`makeNodeRelay`), the reply hijacked. The server has no hooks of a host for its reply to run, and
 * the bytes are those of `relay`: the core's headers in its order, then `content-length`.
 */
const rawRelay =
  (relayNode: NodeRelay): ToCore =>
  (request, reply) => {
    reply.hijack()
    relayNode(request.raw, reply.raw, bodyOf(request))
  }

/**
 * Makes `instance` hand bodies to the core unread: no Fastify parser runs (so none can answer 400/413/415 before the
 * core has checked the route and the credentials), and the refusals Fastify still makes itself (a Content-Type it
 * cannot parse) are routed through the core, which answers them in the contract's order.
 */
const passBodiesThrough = (instance: FastifyInstance, toCore: ToCore): void => {
  instance.removeAllContentTypeParsers()
  instance.addContentTypeParser("*", (_request, payload, done) => done(null, payload))
  instance.setErrorHandler((error: FastifyError, request, reply) => {
    // FST_ERR_CTP_*: a Content-Type Fastify cannot parse; FST_ERR_ROUTE_MISSING_CONTENT_TYPE: a QUERY request without
    // one (RFC 10008), which the core answers like any method it does not serve (405, or 404 off its routes).
    if (
      typeof error.code === "string" &&
      (error.code.startsWith("FST_ERR_CTP_") || error.code === "FST_ERR_ROUTE_MISSING_CONTENT_TYPE")
    ) {
      return toCore(request, reply)
    }
    // Anything else comes from the host's own hooks: its own error handler decides.
    throw error
  })
}

/** The plugin body: catch-all routes for every method on the prefix and everything under it. */
const mountAccord = (instance: FastifyInstance, toCore: ToCore): void => {
  passBodiesThrough(instance, toCore)
  // The core's route table decides 404/405/OPTIONS/HEAD, so every method of every path under the prefix is ours;
  // no automatic HEAD route, since HEAD is in the list.
  for (const url of ["/", "/*"]) {
    instance.route({
      method: instance.supportedMethods,
      url,
      exposeHeadRoute: false,
      handler: toCore
    })
  }
}

/**
 * Accord as an encapsulated Fastify plugin: `app.register(accordPlugin, { prefix: "/api", runtime })`. Not wrapped
 * in fastify-plugin, so the prefix applies and its parsers and error handler stay inside it; the host's routes,
 * parsers and error handler are untouched.
 */
export const accordPlugin: FastifyPluginAsync<AccordPluginOptions, RawServerBase> = async (instance, options) => {
  // Typed for any server Fastify runs on, `http2: true` included (docs/embedding.md, "HTTP/2"): the handlers use only
  // what `node:http2`'s compatibility request and response share with `node:http`'s, which the Node bridge reads.
  const host = instance as unknown as FastifyInstance
  const handler = makeNodeHttpHandler({ ...options, prefix: host.prefix })
  mountAccord(host, (request, reply) => relay(handler, request, reply))
}

/** A Fastify server serving Accord under `prefix` and the core's 404 problem everywhere else. */
export const startFastifyServer = (options: StandaloneServerOptions): Promise<RunningServer> =>
  serve(options, async (handlerOptions, server) => {
    const toCore = rawRelay(makeNodeRelay(handlerOptions))
    let listener: RequestListener | undefined
    const app = Fastify({
      logger: false,
      // A plain Node server (Node's timeouts, not Fastify's 72 s keep-alive), which `serve` guards, drains and listens.
      serverFactory: (fastifyListener) => {
        listener = fastifyListener
        return server
      },
      // `serve` answers malformed HTTP on the server itself (answerClientError), as every standalone server does.
      clientErrorHandler: () => undefined,
      // A path find-my-way cannot decode (`%zz`) is the core's 404, not Fastify's 400.
      frameworkErrors: (_error, request, reply) => void toCore(request, reply)
    })
    passBodiesThrough(app, toCore)
    // Outside the prefix, and methods Fastify does not route (e.g. PROPFIND, which is the core's 405 on a known path).
    app.setNotFoundHandler(toCore)
    await app.register(async (instance) => mountAccord(instance, toCore), { prefix: handlerOptions.prefix })
    await app.ready()
    if (listener === undefined) throw new Error("Fastify did not call its serverFactory")
    // Closed after the drain: once Fastify knows it is closing it answers new requests with its own 503, while
    // docs/api.md ("Precise rules", drain) wants every request on an accepted connection answered.
    return { listener, close: () => app.close() }
  })
