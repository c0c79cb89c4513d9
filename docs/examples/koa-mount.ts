import Koa from "koa"
import Router from "@koa/router"
import { Layer, ManagedRuntime, Schema } from "effect"
import { Seed } from "@accord/domain"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { accordRouter } from "@accord/adapter-koa"

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

const app = new Koa()
// 1. The host's error handling may wrap everything: Accord never throws, it answers its own errors.
app.use(async (ctx, next) => {
  try {
    await next()
  } catch {
    ctx.status = 500
    ctx.body = { error: "something went wrong" }
  }
})
// 2. Accord under /api, before any body parser: it reads its own request bodies.
app.use(accordRouter({ runtime, prefix: "/api" }).routes())
// 3. The host's own body parser and routes after it.
const host = new Router()
host.get("/hello", (ctx) => {
  ctx.body = { hello: "world" }
})
app.use(host.routes())

export const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1")
server.on("close", () => void runtime.dispose())
