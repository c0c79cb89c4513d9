import type { DocsAssets, HttpRequest } from "@accord/core"
import { makeNodeHttpHandler } from "@accord/node/bridge"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { MemoryStoreLive } from "@accord/store-memory"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Layer, ManagedRuntime } from "effect"

const runtime = ManagedRuntime.make(Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive(testScryptCost)))
afterAll(() => runtime.dispose())

const get = (path: string): HttpRequest => ({ method: "GET", path, headers: {} })
const text = (body: string | Uint8Array | undefined): string =>
  typeof body === "string" ? body : new TextDecoder().decode(body)

describe("makeNodeHttpHandler", () => {
  it("serves no API reference page unless `docs` is given: /docs is the core's 404 problem", async () => {
    const handler = makeNodeHttpHandler({ runtime })
    for (const path of ["/api/docs", "/api/docs/init.js", "/api/docs/swagger-ui-bundle.js"]) {
      const response = await handler(get(path))
      expect(response.status, path).toBe(404)
      expect(response.headers["content-type"], path).toBe("application/problem+json; charset=utf-8")
    }
  })

  it("serves exactly the files `docs` holds, the page at /docs", async () => {
    const docs: DocsAssets = new Map([
      ["index.html", { contentType: "text/html; charset=utf-8", body: new TextEncoder().encode("<html>page</html>") }],
      ["app.js", { contentType: "text/javascript; charset=utf-8", body: new TextEncoder().encode("run()") }]
    ])
    const handler = makeNodeHttpHandler({ runtime, prefix: "/reference", docs })
    const page = await handler(get("/reference/docs"))
    expect(page.status).toBe(200)
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8")
    expect(text(page.body)).toBe("<html>page</html>")
    const script = await handler(get("/reference/docs/app.js"))
    expect(script.headers["content-type"]).toBe("text/javascript; charset=utf-8")
    expect(text(script.body)).toBe("run()")
    expect((await handler(get("/reference/docs/init.js"))).status).toBe(404)
  })
})
