import { accordPlugin } from "@accord/adapter-fastify"
import { loadApiReference } from "@accord/api-reference"
import type { AccordRuntime } from "@accord/core"
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify"
import { STATUS_CODES } from "node:http"
import { issueDemoToken, type DemoKeys } from "./tokens.js"

export interface FastifyHostOptions {
  /** Accord's runtime (store, authenticator, hasher); disposed of when the app closes. */
  readonly runtime: AccordRuntime
  readonly keys: DemoKeys
  /** Where Accord answers; default `/api`. */
  readonly prefix?: string
  readonly logger?: FastifyServerOptions["logger"]
}

/** The status an error asks for (Fastify's `statusCode`, as its parsers and validation set it), else 500. */
const statusOf = (error: unknown): number => {
  const status = error instanceof Error && "statusCode" in error ? error.statusCode : undefined
  return typeof status === "number" && Number.isInteger(status) && status >= 400 && status <= 599 ? status : 500
}

const signInBody = {
  type: "object",
  required: ["user"],
  additionalProperties: false,
  properties: { user: { type: "string", pattern: "^[A-Za-z0-9_-]{1,64}$" }, client: { type: "boolean" } }
} as const

/**
 * An existing Fastify app that registers Accord under `/api`. Its routes, Fastify's default JSON parser, its error
 * handler and its 404 stay as they are; Accord's plugin is encapsulated, so its own parsing and problem+json errors
 * apply under its prefix only.
 */
export const createFastifyHost = async ({
  runtime,
  keys,
  prefix = "/api",
  logger = false
}: FastifyHostOptions): Promise<FastifyInstance> => {
  const app = Fastify({ logger })

  // The host's own error format. Client errors say what was wrong; server errors are logged and say nothing more.
  app.setErrorHandler((error, request, reply) => {
    const status = statusOf(error)
    if (status >= 500) request.log.error({ err: error }, "host route failed")
    const message = status < 500 && error instanceof Error ? error.message : STATUS_CODES[status]
    return reply.code(status).send({ error: { status, message } })
  })
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ error: { status: 404, message: `No route for ${request.method} ${request.url}` } })
  )

  // The host's routes: they know nothing about Accord.
  app.get("/hello", async (request) => {
    const { name } = request.query as { name?: string }
    return { message: `Hello, ${name ?? "world"}!` }
  })
  app.post("/echo", async (request) => ({ echo: request.body }))
  app.get("/boom", async () => {
    throw new Error("a bug in the host's own route")
  })

  // The host's sign-in. Demo only: it asks for no password. A real host checks credentials here, then issues the
  // same token; Accord only ever sees the token.
  app.post<{ Body: { user: string; client?: boolean } }>(
    "/login",
    { schema: { body: signInBody } },
    async (request) => ({
      token: await issueDemoToken(keys, request.body.user, { client: request.body.client === true })
    })
  )
  app.get("/.well-known/jwks.json", async () => keys.jwks)

  // Accord, encapsulated under its prefix, with its API reference page at /api/docs (opt-in: without `docs` there is
  // none). The host owns the runtime's lifetime.
  await app.register(accordPlugin, { prefix, runtime, docs: loadApiReference() })
  app.addHook("onClose", () => runtime.dispose())
  return app
}
