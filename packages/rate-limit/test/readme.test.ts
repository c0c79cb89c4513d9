import { readFileSync } from "node:fs"
import { describe, expect, it, vi } from "@effect/vitest"

const read = (relative: string) => readFileSync(new URL(relative, import.meta.url), "utf8")

describe("README", () => {
  it("shows test/readme-example.ts verbatim as its example", () => {
    const readme = read("../README.md")
    const block = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(block).toBe(read("./readme-example.ts"))
  })

  it("the example limits a credential and prints what its comment says", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
    try {
      await import("./readme-example.js")
      expect(log.mock.calls).toStrictEqual([[[200, 200, 429], "2"]])
    } finally {
      log.mockRestore()
    }
  })
})
