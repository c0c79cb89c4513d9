import { accordRouter as router } from "@accord/adapter-koa"
import { send } from "@accord/conformance"
import { startWith } from "@accord/test-support"
import { listen, type RunningServer, type StandaloneServerOptions } from "@accord/node/server"
import KoaHost from "koa"
import { createServer } from "node:http"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { once } from "node:events"
import { readFileSync } from "node:fs"

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
const auth = { Authorization: "Bearer dev-token-u1" }
const json = { ...auth, "Content-Type": "application/json" }
const problemType = "application/problem+json; charset=utf-8"

afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
})

describe("Accord inside a host Koa app (the README example)", () => {
  it("the host's route keeps its own body parsing", async () => {
    const response = await send(url, {
      method: "POST",
      path: "/orders",
      headers: { "Content-Type": "application/json" },
      body: '{"sku":"A-1"}'
    })
    expect(response.status).toBe(200)
    expect(JSON.parse(response.body.toString())).toEqual({ received: { sku: "A-1" } })
  })

  it("the host's error middleware still formats the host's errors", async () => {
    const response = await send(url, {
      method: "POST",
      path: "/orders",
      headers: { "Content-Type": "application/json" },
      body: "{bad"
    })
    expect(response.status).toBe(400)
    expect(JSON.parse(response.body.toString())).toEqual({ host_error: "the host wants JSON" })
  })

  it("paths outside the prefix keep the host's 404", async () => {
    for (const path of ["/elsewhere", "/API/health", "/apis"]) {
      const response = await send(url, { method: "GET", path })
      expect(response.status, path).toBe(404)
      expect(response.headers["content-type"], path).not.toBe(problemType)
    }
  })

  it("Accord's routes answer under the prefix", async () => {
    expect((await send(url, { method: "GET", path: "/api/health" })).status).toBe(200)
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
          headers: { "Content-Type": "text/plain" },
          body: "{}"
        },
        code: "unauthenticated"
      },
      { request: { method: "GET", path: "/api/nope" }, code: "not_found" },
      { request: { method: "GET", path: "/api" }, code: "not_found" },
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

describe("a host that reads every body before Accord's router", () => {
  // What Accord's README warns about: the body is gone when the core asks for it. The answer must still be a
  // clean problem, not a hang or a 500.
  const startBehindGreedyParser = async (options: StandaloneServerOptions): Promise<RunningServer> => {
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

  it("answers 400 invalid_json: the body could not be read", async () => {
    const running = await startWith(startBehindGreedyParser)({ users: [{ id: "u_g", token: "greedy-token" }] })
    try {
      const response = await send(running.url, {
        method: "PUT",
        path: "/api/users/v1/preferences/language/",
        headers: { Authorization: "Bearer greedy-token", "Content-Type": "application/json" },
        body: '{"language":"fr"}'
      })
      expect(response.status).toBe(400)
      expect(JSON.parse(response.body.toString())).toMatchObject({
        code: "invalid_json",
        detail: "The body could not be read."
      })
    } finally {
      await running.close()
    }
  })
})
