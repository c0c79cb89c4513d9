import { accordRouter as router } from "@accord/adapter-koa"
import { runEmbeddingSuite, startWith } from "@accord/test-support"
import { listen, type RunningServer, type StandaloneServerOptions } from "@accord/node/server"
import KoaHost from "koa"
import { createServer } from "node:http"
import { once } from "node:events"

// The README example listens on PORT (default 3000); here on a free port.
process.env.PORT = "0"

// README:start
import Koa from "koa"
import Router from "@koa/router"
import { Layer, ManagedRuntime, Schema } from "effect"
import { Seed } from "@accord/domain"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { accordRouter } from "@accord/adapter-koa"

// The runtime holds the store and the password hasher: the host builds it once and disposes of it on close.
const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_1", token: "dev-token-u1" }] })
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive()))

const app = new Koa()
// The host's own error format...
app.use(async (ctx, next) => {
  try {
    await next()
  } catch (error) {
    ctx.status = error instanceof Koa.HttpError ? error.status : 500
    ctx.body = { host_error: error instanceof Error ? error.message : "error" }
  }
})

// ...Accord under /api: it reads its own bodies (JSON only), so mount it before any body parsing of the host's...
app.use(accordRouter({ runtime, prefix: "/api" }).routes())

// ...and the host's routes with its own body parsing.
const readJson: Koa.Middleware = async (ctx, next) => {
  const chunks: Array<Buffer> = []
  for await (const chunk of ctx.req) chunks.push(chunk)
  try {
    ctx.state.json = JSON.parse(Buffer.concat(chunks).toString("utf8"))
  } catch {
    ctx.throw(400, "the host wants JSON")
  }
  await next()
}
const host = new Router()
host.post("/orders", readJson, (ctx) => {
  ctx.body = { received: ctx.state.json }
})
app.use(host.routes())

const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1")
server.on("close", () => void runtime.dispose())
// README:end

await once(server, "listening")
const address = server.address()
const url = typeof address === "object" && address !== null ? `http://127.0.0.1:${address.port}` : ""

/** A host whose first middleware reads and drops every body, before Accord's router. */
const behindGreedyParser = async (options: StandaloneServerOptions): Promise<RunningServer> => {
  const greedy = new KoaHost()
  greedy.use(async (ctx, next) => {
    for await (const _chunk of ctx.req) {
      // consumed and dropped
    }
    await next()
  })
  greedy.use(router(options).routes())
  const httpServer = createServer(greedy.callback())
  const baseUrl = await listen(httpServer, "127.0.0.1", 0)
  return { url: baseUrl, close: () => new Promise((resolve) => httpServer.close(() => resolve())) }
}

runEmbeddingSuite({
  host: "Koa",
  url,
  close: async () => {
    server.closeAllConnections()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  },
  example: {
    source: new URL("./embedding.test.ts", import.meta.url),
    readme: new URL("../README.md", import.meta.url)
  },
  behindGreedyParser: startWith(behindGreedyParser)
})
