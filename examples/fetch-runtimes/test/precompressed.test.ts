import { send } from "@accord/conformance"
import { describe, expect, it } from "@effect/vitest"
import { Miniflare } from "miniflare"
import { build } from "rolldown"
import workerBundle from "../rolldown.config.ts"

// docs/api.md, "The docs page's files": a precompressed docs file goes out as its bytes. Workers compress a body
// whose Response has a Content-Encoding themselves unless told `encodeBody: "manual"` (adapter-fetch's
// toFetchResponse), which would send the swagger-ui bundle compressed twice.
describe("workerd: a precompressed docs file", () => {
  it("goes out byte for byte, with its Content-Encoding", async () => {
    const bundle = await build({
      ...workerBundle,
      input: new URL("fixtures/precompressed-worker.ts", import.meta.url).pathname,
      write: false
    })
    const miniflare = new Miniflare({
      modules: true,
      script: bundle.output[0].code,
      compatibilityDate: "2026-07-01",
      compatibilityFlags: ["nodejs_compat"],
      host: "127.0.0.1",
      port: 0
    })
    try {
      const url = (await miniflare.ready).origin
      const res = await send(url, { method: "GET", path: "/api/docs/app.js", headers: { "Accept-Encoding": "gzip" } })
      expect(res.status).toBe(200)
      expect(res.headers["content-encoding"]).toBe("gzip")
      expect(res.body.toString("utf8")).toBe("PRECOMPRESSED")
    } finally {
      await miniflare.dispose()
    }
  }, 60_000)
})
