import { readFileSync } from "node:fs"
import { describe, expect, it, vi } from "@effect/vitest"

const read = (relative: string) => readFileSync(new URL(relative, import.meta.url), "utf8")

describe("README", () => {
  it("shows the example file verbatim", () => {
    const shown = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(read("../README.md"))?.[1]
    expect(shown).toBe(read("./readme-example.ts"))
  })

  it("the example prints what its comments say", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
    try {
      await import("./readme-example.js")
      expect(log.mock.calls).toStrictEqual([
        ["PUT", "/payments/v1/payment-methods/{id}/", "user", ["NotFound", "PreconditionFailed", "Unavailable"]],
        ["uri_too_long unavailable internal bad_request request_timeout headers_too_large"],
        [true, false],
        ["3.1.0", true]
      ])
    } finally {
      log.mockRestore()
    }
  })
})
