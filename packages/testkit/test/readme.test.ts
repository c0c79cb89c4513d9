import { readFileSync } from "node:fs"
import { describe, expect, it, vi } from "@effect/vitest"
import { makeAccordTestKit } from "@accord/testkit"

const read = (relative: string) => readFileSync(new URL(relative, import.meta.url), "utf8")

describe("README", () => {
  it("shows test/readme-example.ts verbatim as its example", () => {
    const readme = read("../README.md")
    const block = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(block).toBe(read("./readme-example.ts"))
  })

  it("its table names every member of a kit", async () => {
    const table =
      /## `makeAccordTestKit\(options\?\)`\n[\s\S]*?\n\n(\|[\s\S]*?)\n\n/.exec(read("../README.md"))?.[1] ?? ""
    const named = [...table.matchAll(/^\| `(\w+)(?:\(\))?` \|/gm)].map((match) => match[1])
    const kit = await makeAccordTestKit()
    try {
      expect(named.sort()).toEqual(Object.keys(kit).sort())
    } finally {
      await kit.dispose()
    }
  })

  it("the example runs and prints what its comments say", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
    try {
      await import("./readme-example.js")
      expect(log.mock.calls).toStrictEqual([["u_1", "pt-BR"], [["pm_1", "pm_2"]], [["preferences.updated users/u_1"]]])
    } finally {
      log.mockRestore()
    }
  })
})
