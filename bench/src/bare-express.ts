import express, { type NextFunction, type Request, type Response } from "express"
import {
  authenticate,
  isJsonContentType,
  problem,
  setDefaultPaymentMethod,
  unauthorized,
  updatePreferences,
  type BareResponse,
  type BareStore
} from "./bare-domain.js"
import { BODY_LIMIT, listeningServer, PAYMENT_METHOD_ROUTE, type BareServer } from "./bare-servers.js"
import { LANGUAGE_PATH } from "./workload.js"

/**
 * Baseline: Express 5 as its documentation writes an API (routes with `express.json()` from body-parser, an error
 * middleware), doing the same work as Accord by hand through bare-domain.ts. Like the Accord adapter it sends no
 * `X-Powered-By`, and no ETag (Express computes one for every `res.send` unless told not to), so both answer the same
 * headers. Imported only in its own process (server.ts).
 */

interface Locals {
  user: string
}

const send = (res: Response, response: BareResponse): void => {
  res.status(response.status).set(response.headers).send(response.body)
}

export const startBareExpress = async (store: BareStore): Promise<BareServer> => {
  const app = express()
  app.disable("x-powered-by")
  app.set("etag", false)
  // Credentials first, as in bare Koa, then the media type (express.json() skips other types silently), then the body.
  const authenticated = (req: Request, res: Response<unknown, Locals>, next: NextFunction): void => {
    const user = authenticate(store, req.get("authorization"))
    if (user === undefined) return send(res, unauthorized())
    res.locals.user = user
    next()
  }
  const jsonOnly = (req: Request, res: Response, next: NextFunction): void => {
    if (isJsonContentType(req.get("content-type"))) return next()
    send(res, problem(415, "unsupported_media_type", "The body must be sent as application/json (UTF-8)."))
  }
  // strict: false, so that a body that is JSON but not an object reaches bare-domain's `invalid_body`, as elsewhere.
  const json = express.json({ limit: BODY_LIMIT, strict: false })
  app.put(LANGUAGE_PATH, authenticated, jsonOnly, json, (req: Request, res: Response<unknown, Locals>) => {
    send(res, updatePreferences(store, res.locals.user, req.body))
  })
  app.put(
    PAYMENT_METHOD_ROUTE,
    authenticated,
    jsonOnly,
    json,
    (req: Request<{ id: string }>, res: Response<unknown, Locals>) => {
      send(res, setDefaultPaymentMethod(store, res.locals.user, req.params.id, req.body))
    }
  )
  // body-parser's errors carry a `type`: too large, or not JSON.
  app.use((error: unknown, _req: Request, res: Response, next: NextFunction) => {
    const type = typeof error === "object" && error !== null && "type" in error ? error.type : undefined
    if (type === "entity.too.large") return send(res, problem(413, "payload_too_large", "The body is too large."))
    if (type === "entity.parse.failed") return send(res, problem(400, "invalid_json", "The body is not valid JSON."))
    next(error)
  })
  return listeningServer(app.listen(0, "127.0.0.1"))
}
