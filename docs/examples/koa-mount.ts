import Koa from "koa"
import Router from "@koa/router"
import { Layer, ManagedRuntime } from "effect"
import { ScryptPasswordHasherLive } from "@accord/node"
import { MemoryStoreLive } from "@accord/store-memory"
import { JwtAuthenticatorLive } from "@accord/auth-jwt"
import { accordRouter } from "@accord/adapter-koa"

// Accord's runtime: a store, the JWT authenticator over the identity provider's public keys (it replaces the
// store's own token table: in a merge the later layer wins), and the password hasher.
const runtime = ManagedRuntime.make(
  Layer.mergeAll(
    MemoryStoreLive,
    JwtAuthenticatorLive({
      key: { jwksUrl: process.env.JWKS_URL ?? "https://login.example.com/.well-known/jwks.json" },
      issuer: "https://login.example.com/",
      audience: "accord-api"
    }),
    ScryptPasswordHasherLive()
  )
)

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
