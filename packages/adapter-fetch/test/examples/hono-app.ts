import { Hono } from "hono"
import { Layer, ManagedRuntime, Schema } from "effect"
import { Seed } from "@accord/domain"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { makeFetchHandler } from "@accord/adapter-fetch"

// The runtime holds the store and the password hasher: the host builds it once and disposes of it when it stops.
const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_1", token: "dev-token-u1" }] })
export const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive()))
const accord = makeFetchHandler({ runtime, prefix: "/api" })

export const app = new Hono()
// The host's own routes, body parsing, errors and 404...
app.post("/orders", async (c) => c.json({ received: await c.req.json() }))
app.onError((error, c) => c.json({ host_error: error.message }, 500))
app.notFound((c) => c.json({ host_error: "no such page" }, 404))

// ...and Accord under /api: `/api/*` also matches `/api` itself. Hand it the raw Request, whose path still has the
// prefix the core routes by (`app.mount("/api", accord)` would cut it off, and every answer would be a 404).
app.all("/api/*", (c) => accord(c.req.raw))

// Bun and Deno serve the default export's `fetch`; on Node, `serve({ fetch: app.fetch })` from @hono/node-server.
export default app
