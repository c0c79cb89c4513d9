import { DEFAULT_PREFIX, type HttpHandler, type HttpHandlerOptions } from "@accord/core"
import {
  closeIfBodyUnread,
  makeNodeHttpHandler,
  requestPath,
  requestQuery,
  responsePayload,
  toHttpRequest
} from "@accord/node/bridge"
import { serve, type RunningServer, type StandaloneServerOptions } from "@accord/node/server"
import express, { Router, type Request, type RequestHandler, type Response } from "express"

/**
 * Relays the request to the core (which reads the body itself, JSON only) and its response back verbatim. The core
 * gets the path as the client sent it: Express strips the mount path from `req.url`, never from `req.originalUrl`.
 */
const relay = async (handler: HttpHandler, req: Request, res: Response): Promise<void> => {
  const response = await handler({
    ...toHttpRequest(req, req, res),
    path: requestPath(req.originalUrl),
    query: requestQuery(req.originalUrl)
  })
  closeIfBodyUnread(req, res)
  // Node's own writing, not res.send: that one would add an ETag, guess a Content-Type and rewrite a HEAD or 204
  // answer. The core's headers in its order and spelling, then `content-length`, as Fastify and Koa write them;
  // a bodyless answer keeps the core's headers as they are: none for a 204, GET's length for HEAD (docs/api.md,
  // "Precise rules": HEAD).
  res.statusCode = response.status
  for (const [name, value] of Object.entries(response.headers)) res.setHeader(name, value)
  const payload = responsePayload(response.body)
  if (payload === undefined) {
    res.end()
    return
  }
  res.setHeader("content-length", String(Buffer.byteLength(payload)))
  res.end(payload)
}

/**
 * The middleware that relays to the core. The handler never rejects (every failure is already a response);
 * should writing fail anyway, the connection is closed rather than the error handed to Express, whose next(error)
 * would reach the host's error handler or Express's HTML 500 (docs/embedding.md: Accord answers its own errors).
 */
const relayMiddleware =
  (handler: HttpHandler): RequestHandler =>
  (req, res) =>
    void relay(handler, req, res).catch(() => res.destroy())

/**
 * Accord as an Express 5 router: `app.use("/api", accordExpressRouter({ runtime }))`, with `prefix` (default `/api`)
 * the path it is mounted at. It needs nothing from the host app (no body parser: the core reads the raw body) and
 * claims only the prefix and every path under it, as the client sent them; everything else goes on with `next()`, so
 * the host's routes, parsers and error handlers are untouched.
 */
export const accordExpressRouter = (options: HttpHandlerOptions): Router => {
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const toCore = relayMiddleware(makeNodeHttpHandler({ ...options, prefix }))
  // As the core reads its prefix (a trailing slash dropped), case-sensitively: Express's `app.use("/api")` also
  // matches `/API`, which goes on to the host's next middleware.
  const base = prefix.endsWith("/") ? prefix.slice(0, -1) : prefix
  const router = Router()
  router.use((req, res, next) => {
    const path = requestPath(req.originalUrl)
    // The core's route table decides 404/405/OPTIONS/HEAD, so every method on the prefix and under it is ours.
    if (path === base || path.startsWith(`${base}/`)) toCore(req, res, next)
    else next()
  })
  return router
}

/** An Express server serving Accord under `prefix` and the core's 404 problem everywhere else. */
export const startExpressServer = (options: StandaloneServerOptions): Promise<RunningServer> =>
  serve(options, (handlerOptions) => {
    const app = express()
    // The one header Express adds to every response by itself (ETag comes only from res.send, which is never called).
    app.disable("x-powered-by")
    // One middleware for every request: the core answers under the prefix and its 404 problem everywhere else, so
    // Express's own final handler (its HTML 404 and 500) is never reached. Not the router plus a fallback: a request
    // leaving a router reaches the next middleware only after a setImmediate, by when Node may have taken in an unread
    // body, and `closeIfBodyUnread` would then keep a connection that Koa and Fastify close.
    app.use(relayMiddleware(makeNodeHttpHandler(handlerOptions)))
    return app
  })
