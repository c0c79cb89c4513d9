import Router from "@koa/router"
import Fastify, { type FastifyReply } from "fastify"
import Koa, { type Context } from "koa"
import type { IncomingMessage, Server } from "node:http"
import type { AddressInfo } from "node:net"
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
import { LANGUAGE_PATH } from "./workload.js"

/** The baselines: each framework used the way its documentation shows, doing the same work as Accord by hand. */

export interface BareServer {
  readonly url: string
  readonly close: () => Promise<void>
}

/** A Node server the framework made and started listening on loopback port 0, once it listens. */
export const listeningServer = async (server: Server): Promise<BareServer> => {
  if (!server.listening) {
    await new Promise<void>((resolve, reject) => {
      server.once("listening", resolve)
      server.once("error", reject)
    })
  }
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}

/** Largest body a server of the bench reads (the peers use it too). */
export const BODY_LIMIT = 16_384
export const PAYMENT_METHOD_ROUTE = "/api/payments/v1/payment-methods/:id/"

export const startBareFastify = async (store: BareStore): Promise<BareServer> => {
  // Fastify's own JSON parser (content type check, size limit, prototype poisoning checks) reads the body.
  const app = Fastify({ logger: false, bodyLimit: BODY_LIMIT })
  const send = (reply: FastifyReply, response: BareResponse): void => {
    void reply.code(response.status).headers(response.headers).send(response.body)
  }
  app.put(LANGUAGE_PATH, (request, reply) => {
    const user = authenticate(store, request.headers.authorization)
    send(reply, user === undefined ? unauthorized() : updatePreferences(store, user, request.body))
  })
  app.put<{ Params: { id: string } }>(PAYMENT_METHOD_ROUTE, (request, reply) => {
    const user = authenticate(store, request.headers.authorization)
    send(
      reply,
      user === undefined ? unauthorized() : setDefaultPaymentMethod(store, user, request.params.id, request.body)
    )
  })
  await app.listen({ host: "127.0.0.1", port: 0 })
  const { port } = app.server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() }
}

/** Collects the body up to the limit; undefined when it is larger. */
const readText = (request: IncomingMessage): Promise<string | undefined> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    let size = 0
    request.on("data", (chunk: Buffer) => {
      size += chunk.length
      if (size > BODY_LIMIT) resolve(undefined)
      else chunks.push(chunk)
    })
    request.once("end", () => resolve(Buffer.concat(chunks, size).toString("utf8")))
    request.once("error", reject)
  })

/** A body read and parsed by hand, or the refusal to answer instead. */
export type BodyRead =
  { readonly ok: true; readonly body: unknown } | { readonly ok: false; readonly refusal: BareResponse }

const refuse = (refusal: BareResponse): BodyRead => ({ ok: false, refusal })

/**
 * For a framework without a JSON body parser of its own (Koa), or whose parser would answer other bodies (Hono's
 * `c.req.json()`): the media type checked, the text read (undefined past the limit), then parsed.
 */
export const readJsonBody = async (
  contentType: string | undefined,
  readBodyText: () => Promise<string | undefined>
): Promise<BodyRead> => {
  if (!isJsonContentType(contentType)) {
    return refuse(problem(415, "unsupported_media_type", "The body must be sent as application/json (UTF-8)."))
  }
  const text = await readBodyText()
  if (text === undefined) return refuse(problem(413, "payload_too_large", "The body is too large."))
  if (text === "") return { ok: true, body: undefined }
  try {
    return { ok: true, body: JSON.parse(text) as unknown }
  } catch {
    return refuse(problem(400, "invalid_json", "The body is not valid JSON."))
  }
}

const write = (ctx: Context, response: BareResponse): void => {
  ctx.status = response.status
  ctx.set(response.headers)
  ctx.body = response.body
}

export const startBareKoa = async (store: BareStore): Promise<BareServer> => {
  const router = new Router()
  router.put(LANGUAGE_PATH, async (ctx) => {
    const user = authenticate(store, ctx.get("authorization") || undefined)
    if (user === undefined) return write(ctx, unauthorized())
    const read = await readJsonBody(ctx.get("content-type") || undefined, () => readText(ctx.req))
    write(ctx, read.ok ? updatePreferences(store, user, read.body) : read.refusal)
  })
  router.put(PAYMENT_METHOD_ROUTE, async (ctx) => {
    const user = authenticate(store, ctx.get("authorization") || undefined)
    if (user === undefined) return write(ctx, unauthorized())
    const read = await readJsonBody(ctx.get("content-type") || undefined, () => readText(ctx.req))
    write(ctx, read.ok ? setDefaultPaymentMethod(store, user, ctx.params["id"] ?? "", read.body) : read.refusal)
  })
  const app = new Koa()
  app.use(router.routes())
  return listeningServer(app.listen(0, "127.0.0.1"))
}
