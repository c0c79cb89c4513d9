import { accordRouter } from "@accord/adapter-koa"
import { loadApiReference } from "@accord/api-reference"
import type { AccordRuntime } from "@accord/core"
import { bodyParser } from "@koa/bodyparser"
import Router from "@koa/router"
import Koa, { HttpError } from "koa"
import { STATUS_CODES } from "node:http"

/** The status an error asks for (Koa's convention: `status`, as http-errors and body parsers set it), else 500. */
const statusOf = (error: unknown): number => {
  const status = error instanceof Error && "status" in error ? error.status : undefined
  return typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500
}

/** The host's own error body, on every error outside Accord's prefix: `{"error":{"status":404,"message":"..."}}`. */
const hostErrors: Koa.Middleware = async (ctx, next) => {
  try {
    await next()
  } catch (error) {
    const status = statusOf(error)
    // Only errors marked safe to show (Koa's `expose`) tell their message; the rest get the status phrase. A server
    // error also goes to the app's "error" listeners (main.ts logs it).
    const message = error instanceof HttpError && error.expose ? error.message : (STATUS_CODES[status] ?? "Error")
    ctx.status = status
    ctx.body = { error: { status, message } }
    if (status >= 500) ctx.app.emit("error", error, ctx)
  }
}

/** The host's routes: they know nothing about Accord. */
const hostRoutes = (): Router => {
  const router = new Router()
  router.get("/hello", (ctx) => {
    ctx.body = { message: `Hello, ${typeof ctx.query["name"] === "string" ? ctx.query["name"] : "world"}!` }
  })
  router.post("/echo", (ctx) => {
    ctx.body = { echo: ctx.request.body ?? null }
  })
  router.get("/boom", () => {
    throw new Error("a bug in the host's own route")
  })
  return router
}

export interface KoaHostOptions {
  /** Accord's runtime (store, authenticator, hasher); the caller builds and disposes of it. */
  readonly runtime: AccordRuntime
  /** Where Accord answers; default `/api`. */
  readonly prefix?: string
}

/**
 * An existing Koa app with Accord mounted under `/api`. The order is the point: the host's error middleware first
 * (Accord never throws: it answers its own errors as problem+json), then Accord's router, then the host's body
 * parser and routes. Accord reads its own request bodies, so it must come before a parser that would consume them.
 */
export const createKoaHost = ({ runtime, prefix = "/api" }: KoaHostOptions): Koa => {
  const app = new Koa()
  app.use(hostErrors)
  // The API reference page at {prefix}/docs is opt-in: without `docs` there is none.
  app.use(accordRouter({ runtime, prefix, docs: loadApiReference() }).routes())
  app.use(bodyParser({ enableTypes: ["json"] }))
  const routes = hostRoutes()
  app.use(routes.routes())
  app.use(routes.allowedMethods({ throw: true }))
  // Nothing matched: the host's own 404, in the host's own format.
  app.use((ctx) => ctx.throw(404, `No route for ${ctx.method} ${ctx.path}`))
  return app
}
