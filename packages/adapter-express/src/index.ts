import { DEFAULT_PREFIX, type HttpHandlerOptions } from "@accord/core"
import { makeNodeRelay, requestPath, type NodeRelay } from "@accord/node/bridge"
import { serve, type RunningServer, type StandaloneServerOptions } from "@accord/node/server"
import express, { Router, type RequestHandler } from "express"

/**
 * The middleware that relays to the core (which reads the body itself, JSON only) and writes its answer with Node's
 * own writing (`makeNodeRelay`), not res.send: that one would add an ETag, guess a Content-Type and rewrite a HEAD or
 * 204 answer. The core gets the target as the client sent it: Express strips the mount path from `req.url`, never
 * from `req.originalUrl`. Should writing fail, the connection is closed rather than the error handed to Express, whose
 * next(error) would reach the host's error handler or Express's HTML 500 (docs/embedding.md: Accord answers its own
 * errors).
 */
const relayMiddleware =
  (relayNode: NodeRelay): RequestHandler =>
  (req, res) =>
    relayNode(req, res, req, req.originalUrl)

/**
 * Accord as an Express 5 router: `app.use("/api", accordExpressRouter({ runtime }))`, with `prefix` (default `/api`)
 * the path it is mounted at. It needs nothing from the host app (no body parser: the core reads the raw body) and
 * claims only the prefix and every path under it, as the client sent them; everything else goes on with `next()`, so
 * the host's routes, parsers and error handlers are untouched.
 */
export const accordExpressRouter = (options: HttpHandlerOptions): Router => {
  const prefix = options.prefix ?? DEFAULT_PREFIX
  const toCore = relayMiddleware(makeNodeRelay({ ...options, prefix }))
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
    app.use(relayMiddleware(makeNodeRelay(handlerOptions)))
    return app
  })
