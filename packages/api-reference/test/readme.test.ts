import { readFileSync } from "node:fs"
import { describe, expect, it, vi } from "@effect/vitest"

const read = (relative: string) => readFileSync(new URL(relative, import.meta.url), "utf8")

describe("README", () => {
  it("shows test/readme-example.ts verbatim as its example", () => {
    const readme = read("../README.md")
    const block = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(block).toBe(read("./readme-example.ts"))
  })

  it("the example serves the page and its files and prints what its comments say", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
    try {
      await import("./readme-example.js")
      expect(log.mock.calls).toStrictEqual([
        [200, "/api/docs", "text/html; charset=utf-8", "no-cache"],
        [200, "/api/docs/init.js", "text/javascript; charset=utf-8", "no-cache"],
        [200, "/api/docs/favicon.svg", "image/svg+xml", "no-cache"],
        [200, "/api/docs/swagger-ui.css", "text/css; charset=utf-8", "public, max-age=31536000, immutable"],
        [200, "/api/docs/swagger-ui-bundle.js", "text/javascript; charset=utf-8", "public, max-age=31536000, immutable"]
      ])
    } finally {
      log.mockRestore()
    }
  })
})
