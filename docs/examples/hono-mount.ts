import { Hono } from "hono"
import { Layer, ManagedRuntime, Result } from "effect"
import { ScryptPasswordHasherLive } from "@accord/node"
import { MemoryStoreLive } from "@accord/store-memory"
import { JwtAuthenticatorLive, jwtConfigFromEnv } from "@accord/auth-jwt"
import { makeFetchHandler } from "@accord/adapter-fetch"

// The same JWT settings from the environment as in the Fastify example.
const jwt = Result.getOrThrowWith(jwtConfigFromEnv(process.env), (error) => error)
export const runtime = ManagedRuntime.make(
  Layer.mergeAll(MemoryStoreLive, JwtAuthenticatorLive(jwt), ScryptPasswordHasherLive())
)
const accord = makeFetchHandler({ runtime, prefix: "/api" })

const app = new Hono()
// The host's routes, parsers and 404 stay as they are...
app.get("/hello", (c) => c.json({ hello: "world" }))
// ...and /api and everything under it go to Accord as the raw Request, whose path keeps the prefix the core routes by.
app.all("/api/*", (c) => accord(c.req.raw))

// Bun and Deno serve the default export; on Node, `serve(app)` from @hono/node-server.
export default app
