import { serve } from "@hono/node-server"
import { Hono, type Context, type MiddlewareHandler } from "hono"
import { bodyLimit } from "hono/body-limit"
import type { Server } from "node:http"
import {
  authenticate,
  problem,
  setDefaultPaymentMethod,
  unauthorized,
  updatePreferences,
  type BareResponse,
  type BareStore
} from "./bare-domain.js"
import { BODY_LIMIT, listeningServer, PAYMENT_METHOD_ROUTE, readJsonBody, type BareServer } from "./bare-servers.js"
import { LANGUAGE_PATH } from "./workload.js"

/**
 * Baseline of the fetch adapter: Hono on @hono/node-server (the server the fetch adapter runs on in Node), as Hono's
 * documentation writes an API (routes, the `bodyLimit` middleware, `serve({ fetch: app.fetch })` with its defaults),
 * doing the same work as Accord by hand through bare-domain.ts, the way a careful developer makes it fast:
 * - a declared length is checked by hand, and only a body without one (chunked) goes through `bodyLimit`, which
 *   counts it as it streams: `bodyLimit` starts by reading `c.req.raw.body`, which turns @hono/node-server's light
 *   request into a full web Request with a stream (several times the cost of the rest of the request here), while
 *   `c.req.text()` has a fast path that reads the Node request directly;
 * - the body is read as text and parsed by hand, as in bare Koa: `c.req.json()` would not tell a refused media type
 *   from bad JSON.
 * Imported only in its own process (server.ts), since `serve` replaces the global Request and Response with its own
 * by default.
 */

const send = (response: BareResponse): Response =>
  new Response(response.body, { status: response.status, headers: response.headers })

export const startBareHono = async (store: BareStore): Promise<BareServer> => {
  const app = new Hono()
  const tooLarge = () => send(problem(413, "payload_too_large", "The body is too large."))
  const streamed = bodyLimit({ maxSize: BODY_LIMIT, onError: tooLarge })
  const limit: MiddlewareHandler = async (c, next) => {
    const declared = c.req.header("content-length")
    if (declared === undefined || c.req.header("transfer-encoding") !== undefined) return streamed(c, next)
    if (Number(declared) > BODY_LIMIT) return tooLarge()
    await next()
  }
  const body = (c: Context) => readJsonBody(c.req.header("content-type"), () => c.req.text())
  app.put(LANGUAGE_PATH, limit, async (c) => {
    const user = authenticate(store, c.req.header("authorization"))
    if (user === undefined) return send(unauthorized())
    const read = await body(c)
    return send(read.ok ? updatePreferences(store, user, read.body) : read.refusal)
  })
  app.put(PAYMENT_METHOD_ROUTE, limit, async (c) => {
    const user = authenticate(store, c.req.header("authorization"))
    if (user === undefined) return send(unauthorized())
    const read = await body(c)
    return send(read.ok ? setDefaultPaymentMethod(store, user, c.req.param("id"), read.body) : read.refusal)
  })
  // `serve` makes a node:http server unless told to make an HTTP/2 one.
  return listeningServer(serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }) as Server)
}
