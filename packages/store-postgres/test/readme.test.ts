import { readFileSync } from "node:fs"
import { describe, expect, it, vi } from "@effect/vitest"

const read = (relative: string) => readFileSync(new URL(relative, import.meta.url), "utf8")

describe("README", () => {
  it("shows test/readme-example.ts verbatim as its example", () => {
    const block = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(read("../README.md"))?.[1]
    expect(block).toBe(read("./readme-example.ts"))
  })

  it("the example runs and prints what its comments say", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
    try {
      await import("./readme-example.js")
      const printed = log.mock.calls.map((args) => args.join(" "))
      const promised = [...read("./readme-example.ts").matchAll(/^\/\/ (.+)$/gm)]
        .map((match) => match[1])
        .filter((line) => line !== undefined && /^(pm_|en )/.test(line))
      expect(promised).toHaveLength(3)
      expect(printed).toEqual(promised)
    } finally {
      log.mockRestore()
    }
  }, 60_000)
})
