import { accordExpressRouter as router } from "@accord/adapter-express"
import { send } from "@accord/conformance"
import { startWith } from "@accord/test-support"
import { listen, type RunningServer, type StandaloneServerOptions } from "@accord/node/server"
import expressHost from "express"
import { createServer, type Server } from "node:http"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { once } from "node:events"
import { readFileSync } from "node:fs"

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
const auth = { Authorization: "Bearer dev-token-u1" }
const json = { ...auth, "Content-Type": "application/json" }
const problemType = "application/problem+json; charset=utf-8"

const closeServer = (httpServer: Server): Promise<void> => {
  httpServer.closeAllConnections()
  return new Promise((resolve) => httpServer.close(() => resolve()))
}

afterAll(() => closeServer(server))

describe("Accord inside a host Express app (the README example)", () => {
  it("the host's route keeps express.json()", async () => {
    const response = await send(url, {
      method: "POST",
      path: "/orders",
      headers: { "Content-Type": "application/json" },
      body: '{"sku":"A-1"}'
    })
    expect(response.status).toBe(200)
    expect(JSON.parse(response.body.toString())).toEqual({ received: { sku: "A-1" } })
  })

  it("the host's error handler still formats the host's errors", async () => {
    const response = await send(url, {
      method: "POST",
      path: "/orders",
      headers: { "Content-Type": "application/json" },
      body: "{bad"
    })
    expect(response.status).toBe(400)
    expect(JSON.parse(response.body.toString())).toHaveProperty("host_error")
  })

  it("paths outside the prefix keep the host's 404 (Express matches /api case-insensitively; Accord does not)", async () => {
    for (const path of ["/elsewhere", "/API/health", "/apis"]) {
      const response = await send(url, { method: "GET", path })
      expect(response.status, path).toBe(404)
      expect(response.headers["content-type"], path).not.toBe(problemType)
    }
  })

  it("Accord's routes answer under the prefix, with the full path (the mount path is not stripped)", async () => {
    expect((await send(url, { method: "GET", path: "/api/health" })).status).toBe(200)
    expect((await send(url, { method: "GET", path: "/api/health?probe=1" })).status).toBe(200)
    const updated = await send(url, {
      method: "PUT",
      path: "/api/users/v1/preferences/language/",
      headers: json,
      body: '{"language":"EN-us"}'
    })
    expect(updated.status).toBe(200)
    expect(JSON.parse(updated.body.toString())).toMatchObject({ language: "en-US" })
    const created = await send(url, {
      method: "POST",
      path: "/api/plans/v1/subscription-plans/public/",
      headers: json,
      body: '{"email":"ada@Example.COM","password":"correct horse"}'
    })
    expect(created.status).toBe(201)
    expect(created.body.toString()).toBe('{"email":"ada@example.com","password":"********"}')
    // Written by Node, not res.send: no ETag, the core's Content-Type; only the host app's own default header remains.
    expect(created.headers).not.toHaveProperty("etag")
    expect(created.headers["content-type"]).toBe("application/json; charset=utf-8")
    expect(created.headers["x-powered-by"]).toBe("Express")
  })

  it("Accord's errors are its own problems, never the host's format", async () => {
    const cases = [
      {
        request: { method: "PUT", path: "/api/users/v1/preferences/language/", headers: json, body: "{bad" },
        code: "invalid_json"
      },
      {
        request: {
          method: "PUT",
          path: "/api/users/v1/preferences/language/",
          headers: { ...auth, "Content-Type": "text/plain" },
          body: "{}"
        },
        code: "unsupported_media_type"
      },
      {
        request: {
          method: "PUT",
          path: "/api/users/v1/preferences/language/",
          headers: { ...json, "Content-Type": "application/json; charset=latin1" },
          body: "{}"
        },
        code: "unsupported_media_type"
      },
      {
        request: {
          method: "PUT",
          path: "/api/users/v1/preferences/language/",
          headers: { "Content-Type": "application/json" },
          body: "{bad"
        },
        code: "unauthenticated"
      },
      {
        request: {
          method: "PUT",
          path: "/api/users/v1/preferences/language/",
          headers: json,
          body: `{"language":"${"a".repeat(20_000)}"}`
        },
        code: "payload_too_large"
      },
      { request: { method: "GET", path: "/api/nope" }, code: "not_found" },
      { request: { method: "GET", path: "/api" }, code: "not_found" },
      { request: { method: "GET", path: "/api/%zz" }, code: "not_found" },
      { request: { method: "DELETE", path: "/api/health" }, code: "method_not_allowed" }
    ]
    for (const { request, code } of cases) {
      const response = await send(url, request)
      expect(response.headers["content-type"], `${request.method} ${request.path}`).toBe(problemType)
      expect(JSON.parse(response.body.toString())).toMatchObject({ code })
    }
  })

  it("README.md shows exactly this example", () => {
    const source = readFileSync(new URL("./embedding.test.ts", import.meta.url), "utf8")
    const example = source.slice(
      source.indexOf("// README:start\n") + "// README:start\n".length,
      source.indexOf("// README:end")
    )
    expect(readFileSync(new URL("../README.md", import.meta.url), "utf8")).toContain("```ts\n" + example + "```\n")
  })
})

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

const greedySeed = { users: [{ id: "u_g", token: "greedy-token" }] }
const preferences = "/api/users/v1/preferences/language/"

describe("a host that parses every body before Accord's router", () => {
  // What Accord's README warns about: express.json() in front consumes the body before the core asks for it. The
  // answer must still be the core's, in the contract's order, not a hang or a 500.
  const behindParser = startInHost((host, accord) => {
    host.use(expressHost.json())
    host.use("/api", accord)
  })

  it("answers 400 invalid_json (the body could not be read), 401 first without credentials", async () => {
    const running = await startWith(behindParser)(greedySeed)
    try {
      const body = '{"language":"fr"}'
      const consumed = await send(running.url, {
        method: "PUT",
        path: preferences,
        headers: { Authorization: "Bearer greedy-token", "Content-Type": "application/json" },
        body
      })
      expect(consumed.status).toBe(400)
      expect(JSON.parse(consumed.body.toString())).toMatchObject({
        code: "invalid_json",
        detail: "The body could not be read."
      })
      const anonymous = await send(running.url, {
        method: "PUT",
        path: preferences,
        headers: { "Content-Type": "application/json" },
        body
      })
      expect(JSON.parse(anonymous.body.toString())).toMatchObject({ code: "unauthenticated" })
      // A body the parser leaves alone (not JSON to it) still reaches the core: its 415.
      const plain = await send(running.url, {
        method: "PUT",
        path: preferences,
        headers: { Authorization: "Bearer greedy-token", "Content-Type": "text/plain" },
        body
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
})

describe("other ways to mount it", () => {
  it("at the app's root: `prefix` is then the only thing that scopes it", async () => {
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
