import { readFileSync } from "node:fs"
import { describe, expect, it, vi } from "@effect/vitest"

const read = (relative: string) => readFileSync(new URL(relative, import.meta.url), "utf8")

describe("README", () => {
  it("shows test/readme-example.ts verbatim as its example", () => {
    const readme = read("../README.md")
    const block = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(block).toBe(read("./readme-example.ts"))
  })

  it("the example answers a PUT through the handler as its comment says", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
    try {
      await import("./readme-example.js")
      const [status, tagged, body] = log.mock.calls[0] ?? []
      expect([status, tagged]).toEqual([200, true])
      expect(JSON.parse(String(body))).toMatchObject({ id: 1, language: "en-US", timezone: 0, mfa_enabled: false })
    } finally {
      log.mockRestore()
    }
  })
})
