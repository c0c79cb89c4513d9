import { Hono } from "hono"
import { serve } from "@hono/node-server"
import { Layer, ManagedRuntime, Schema } from "effect"
import { Seed } from "@accord/domain"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { makeFetchHandler } from "@accord/adapter-fetch"

// Accord's runtime for a first run: an in-memory store holding user u_1, with the public demo token docs/curl.md uses,
// and two payment methods; and the password hasher. In production: your database and your tokens ("JWT configuration").
const seed = Schema.decodeUnknownSync(Seed)({
  users: [{ id: "u_1", token: "u1-demo-token-7f3c9a" }],
  payment_methods: [
    { id: "pm_1", user_id: "u_1", is_default: true },
    { id: "pm_2", user_id: "u_1" }
  ]
})
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive()))
const accord = makeFetchHandler({ runtime, prefix: "/api" })

const app = new Hono()
// The host's routes, parsers and 404 stay as they are...
app.get("/hello", (c) => c.json({ hello: "world" }))
// ...and /api and everything under it go to Accord as the raw Request, whose path keeps the prefix the core routes by.
app.all("/api/*", (c) => accord(c.req.raw))

// Node: @hono/node-server serves the app. Bun, Deno and Workers: `export default app` instead of these two lines.
export const server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: Number(process.env.PORT ?? 3000) })
server.on("close", () => void runtime.dispose())
