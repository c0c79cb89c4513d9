import { readFileSync } from "node:fs"
import { describe, expect, it, vi } from "@effect/vitest"
import { type ClientId, Principal, type UserId } from "@accord/domain"

const read = (relative: string) => readFileSync(new URL(relative, import.meta.url), "utf8")

describe("README", () => {
  it("shows test/readme-example.ts verbatim as its example", () => {
    const readme = read("../README.md")
    const block = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(readme)?.[1]
    expect(block).toBe(read("./readme-example.ts"))
  })

  it("the example runs and prints what its comments say", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
    try {
      await import("./readme-example.js")
      expect(log.mock.calls).toStrictEqual([
        [Principal.User({ userId: "u_1" as UserId })],
        [Principal.Client({ clientId: "web" as ClientId })],
        ["invalid_token"]
      ])
    } finally {
      log.mockRestore()
    }
  })
})
