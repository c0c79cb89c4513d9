import { accordExpressRouter as router } from "@accord/adapter-express"
import { send } from "@accord/conformance"
import { runEmbeddingSuite, startWith } from "@accord/test-support"
import { listen, type RunningServer, type StandaloneServerOptions } from "@accord/node/server"
import expressHost from "express"
import { createServer, type Server } from "node:http"
import { describe, expect, it } from "@effect/vitest"
import { once } from "node:events"

// The README example listens on PORT (default 3000); here on a free port.
process.env.PORT = "0"

// README:start
import express, { type NextFunction, type Request, type Response } from "express"
import { Layer, ManagedRuntime, Schema } from "effect"
import { Seed } from "@accord/domain"
import { ScryptPasswordHasherLive } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { accordExpressRouter } from "@accord/adapter-express"

// The runtime holds the store and the password hasher: the host builds it once and disposes of it on close.
const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_1", token: "dev-token-u1" }] })
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive()))

const app = express()
// Accord under /api: it reads its own bodies (JSON only), so mount it before the host's body parser...
app.use("/api", accordExpressRouter({ runtime }))

// ...and the host's own JSON parser, routes and error format for everything else.
app.use(express.json())
app.post("/orders", (req, res) => {
  res.json({ received: req.body })
})
// Express knows an error handler by its four parameters, so `_next` stays.
app.use((error: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
  res.status(error.status ?? 500).json({ host_error: error.message })
})

const server = app.listen(Number(process.env.PORT ?? 3000), "127.0.0.1")
server.on("close", () => void runtime.dispose())
// README:end

if (!server.listening) await once(server, "listening")
const address = server.address()
const url = typeof address === "object" && address !== null ? `http://127.0.0.1:${address.port}` : ""
const problemType = "application/problem+json; charset=utf-8"
const preferences = "/api/users/v1/preferences/language/"

const closeServer = (httpServer: Server): Promise<void> => {
  httpServer.closeAllConnections()
  return new Promise((resolve) => httpServer.close(() => resolve()))
}

/** A host app around the router: `arrange` adds the host's middleware before it, e.g. a body parser. */
const startInHost =
  (arrange: (host: expressHost.Express, accord: expressHost.Router) => void) =>
  async (options: StandaloneServerOptions): Promise<RunningServer> => {
    const host = expressHost()
    arrange(host, router(options))
    host.use((error: Error & { status?: number }, _req: Request, res: Response, _next: NextFunction) => {
      res.status(error.status ?? 500).json({ host_error: error.message })
    })
    const httpServer = createServer(host)
    const baseUrl = await listen(httpServer, "127.0.0.1", 0)
    return { url: baseUrl, close: () => closeServer(httpServer) }
  }

// What express.json() in front does: it consumes the body before the core asks for it (Accord's README warns).
const behindParser = startInHost((host, accord) => {
  host.use(expressHost.json())
  host.use("/api", accord)
})

runEmbeddingSuite({
  host: "Express",
  url,
  close: () => closeServer(server),
  example: {
    source: new URL("./embedding.test.ts", import.meta.url),
    readme: new URL("../README.md", import.meta.url)
  },
  behindGreedyParser: startWith(behindParser)
})

const greedySeed = { users: [{ id: "u_g", token: "greedy-token" }] }

describe("Express's own ways", () => {
  it("its answers are written by Node, not res.send: only the app's own default header is added", async () => {
    const created = await send(url, {
      method: "POST",
      path: "/api/plans/v1/subscription-plans/public/",
      headers: { Authorization: "Bearer dev-token-u1", "Content-Type": "application/json" },
      body: '{"email":"grace@example.com","password":"correct horse"}'
    })
    expect(created.status).toBe(201)
    expect(created.headers["x-powered-by"]).toBe("Express")
  })

  it("behind express.json(), a body it leaves alone (not JSON to it) still reaches the core: its 415", async () => {
    const running = await startWith(behindParser)(greedySeed)
    try {
      const plain = await send(running.url, {
        method: "PUT",
        path: preferences,
        headers: { Authorization: "Bearer greedy-token", "Content-Type": "text/plain" },
        body: '{"language":"fr"}'
      })
      expect(JSON.parse(plain.body.toString())).toMatchObject({ code: "unsupported_media_type" })
    } finally {
      await running.close()
    }
  })

  it("a body the host's parser refuses goes to the host's error handler: Express skips the router on an error", async () => {
    const running = await startWith(behindParser)(greedySeed)
    try {
      const refused = await send(running.url, {
        method: "PUT",
        path: preferences,
        headers: { Authorization: "Bearer greedy-token", "Content-Type": "application/json" },
        body: "{bad"
      })
      expect(refused.status).toBe(400)
      expect(JSON.parse(refused.body.toString())).toHaveProperty("host_error")
    } finally {
      await running.close()
    }
  })

  it("mounted at the app's root: `prefix` is then the only thing that scopes it", async () => {
    const running = await startWith(startInHost((host, accord) => host.use(accord)))(greedySeed)
    try {
      expect((await send(running.url, { method: "GET", path: "/api/health" })).status).toBe(200)
      const outside = await send(running.url, { method: "GET", path: "/elsewhere" })
      expect(outside.status).toBe(404)
      expect(outside.headers["content-type"]).not.toBe(problemType)
    } finally {
      await running.close()
    }
  })

  it("inside a sub-router: the core sees the full path, so `prefix` is the full mount path", async () => {
    const nested = (options: StandaloneServerOptions) =>
      startInHost((host) => {
        const v2 = expressHost.Router()
        v2.use("/api", router({ ...options, prefix: "/v2/api" }))
        host.use("/v2", v2)
      })(options)
    const running = await startWith(nested)(greedySeed)
    try {
      const health = await send(running.url, { method: "GET", path: "/v2/api/health" })
      expect(health.status).toBe(200)
      const openapi = await send(running.url, { method: "GET", path: "/v2/api/openapi.json" })
      expect(JSON.parse(openapi.body.toString())).toMatchObject({ servers: [{ url: "/v2/api" }] })
      expect((await send(running.url, { method: "GET", path: "/api/health" })).status).toBe(404)
    } finally {
      await running.close()
    }
  })
})
