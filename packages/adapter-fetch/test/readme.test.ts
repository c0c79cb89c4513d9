import { send } from "@accord/conformance"
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"

/** The README's code blocks, in order: each is a file that a test runs (here, or examples/fetch-runtimes/test). */
const examples = [
  "hono-app.ts",
  "worker.ts",
  // The Bun and Deno hosts that examples/fetch-runtimes/test starts on each runtime.
  "../../../examples/fetch-runtimes/src/bun.ts",
  "../../../examples/fetch-runtimes/src/deno.ts",
  "standalone.ts"
]
const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8")

describe("README.md", () => {
  it("shows exactly the example files, verbatim, in order, and no other TypeScript", () => {
    const blocks = [...read("../README.md").matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(([, code]) => code)
    expect(blocks).toEqual(examples.map((name) => read(name.startsWith("../") ? name : `./examples/${name}`)))
  })

  it("the Workers, Bun and Deno example answers a plain call to its fetch", async () => {
    const worker = (await import("./examples/worker.js")).default
    const response = await worker.fetch(new Request("https://worker.example/api/health"))
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('{"status":"ok"}')
    const outside = await worker.fetch(new Request("https://worker.example/elsewhere"))
    expect(outside.status).toBe(404)
    expect(outside.headers.get("content-type")).toBe("application/problem+json; charset=utf-8")
  })

  it("the standalone server example listens, answers and drains", async () => {
    process.env.PORT = "0"
    const { server, stop } = await import("./examples/standalone.js")
    try {
      expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/)
      const response = await send(server.url, { method: "GET", path: "/api/health" })
      expect(response.status).toBe(200)
      expect(response.headers["content-length"]).toBe("15")
    } finally {
      await stop()
    }
  })
})
