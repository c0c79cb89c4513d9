import { DEFAULT_PREFIX, type HttpHandler, type HttpHandlerOptions } from "@accord/core"
import {
  closeIfBodyUnread,
  makeNodeHttpHandler,
  makeNodeRelay,
  responsePayload,
  toHttpRequest,
  writeNodeResponse
} from "@accord/node/bridge"
import { serve, type RunningServer, type StandaloneServerOptions } from "@accord/node/server"
import Router from "@koa/router"
import Koa, { type Context } from "koa"

/** Relays the request to the core (which reads the body itself, JSON only) and its response back verbatim. */
const relay = async (handler: HttpHandler, ctx: Context): Promise<void> => {
  const response = await handler(toHttpRequest(ctx.req, ctx.req, ctx.res))
  if (response.stream !== undefined) {
    // An event stream is written on Node's response as it comes (no Koa body, no compression of the host's).
    ctx.respond = false
    writeNodeResponse(ctx.req, ctx.res, response)
    return
  }
  closeIfBodyUnread(ctx.req, ctx.res)
  ctx.status = response.status
  const payload = responsePayload(response.body)
  if (payload === undefined) {
    // Koa would invent a body for an empty one ("OK" as text/plain) and strip Content-Type from a 204; a bodyless
    // answer (204, HEAD) is written as it is instead, exactly as Fastify writes it.
    ctx.set(response.headers)
    ctx.respond = false
    ctx.res.end()
    return
  }
  // The core's headers first, so Koa finds a Content-Type and guesses none (a MIME lookup per response); it then adds
  // Content-Length, re-set in Fastify's spelling so the header block is Fastify's byte for byte.
  ctx.set(response.headers)
  ctx.body = payload
  ctx.res.setHeader("content-length", String(Buffer.byteLength(payload)))
}

const routerFor = (handler: HttpHandler, prefix: string): Router => {
  // Case-sensitive, so only the prefix itself is claimed; the core's route table decides 404/405/OPTIONS/HEAD, so
  // every method on the prefix and under it goes to it.
  const router = new Router({ prefix, sensitive: true })
  const route = (ctx: Context): Promise<void> => relay(handler, ctx)
  router.all("/", route)
  router.all("/{*path}", route)
  return router
}

/**
 * Accord as a `@koa/router` Router: `app.use(accordRouter({ runtime, prefix: "/api" }).routes())`. It needs nothing
 * from the host app (no body parser: the core reads the raw body) and answers only under its prefix.
 */
export const accordRouter = (options: HttpHandlerOptions): Router => {
  const prefix = options.prefix ?? DEFAULT_PREFIX
  return routerFor(makeNodeHttpHandler({ ...options, prefix }), prefix)
}

/**
 * A Koa server serving Accord under `prefix` and the core's 404 problem everywhere else. Every request goes to the
 * core, whose route table decides (so no router in front of it), and its answer is written on Node's response itself
 * (`makeNodeRelay`, Koa told not to respond): the server has no middleware of a host after it to see `ctx.body`.
 */
export const startKoaServer = (options: StandaloneServerOptions): Promise<RunningServer> =>
  serve(options, (handlerOptions) => {
    const relayNode = makeNodeRelay(handlerOptions)
    const app = new Koa()
    // Koa's default listener prints an error's stack to stderr as plain text (a client resetting the connection
    // mid-answer is enough); the host's log gets it instead, or nothing does.
    app.silent = true
    app.on("error", (error: unknown) => options.onConnectionError?.(error))
    app.use((ctx) => {
      ctx.respond = false
      relayNode(ctx.req, ctx.res)
    })
    return app.callback()
  })
