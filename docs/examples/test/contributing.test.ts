import { existsSync, readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"

const repoRoot = new URL("../../../", import.meta.url)
const walkThrough = readFileSync(new URL("docs/contributing.md", repoRoot), "utf8")

/** Each code block of the walk-through: the file its first line names, and the lines quoted from it. */
const quotes = [...walkThrough.matchAll(/^```ts\n\/\/ (\S+)\n([\s\S]*?)^```$/gm)].map(([, file = "", code = ""]) => ({
  file,
  code
}))

describe("docs/contributing.md (adding an operation)", () => {
  it("quotes the contract, a use case and the implementation map", () => {
    expect(quotes.map(({ file }) => file)).toEqual([
      "packages/contract/src/operations/payments.ts",
      "packages/contract/src/operations/payments.ts",
      "packages/domain/src/use-cases/payment-methods.ts",
      "packages/core/src/implementations.ts"
    ])
    expect([...walkThrough.matchAll(/^```/gm)].length, "every code block names its file").toBe(quotes.length * 2)
  })

  it.each(quotes.map((quote) => [quote.file, quote.code]))("quotes %s as it is", (file, code) => {
    expect(readFileSync(new URL(file, repoRoot), "utf8")).toContain(code)
  })

  it("names only files that exist", () => {
    const named = [...walkThrough.matchAll(/`((?:packages|docs)\/[\w./-]+\.(?:ts|json|md))`/g)].map(([, path]) => path)
    expect(named.length).toBeGreaterThan(0)
    expect(named.filter((path) => path !== undefined && !existsSync(new URL(path, repoRoot)))).toEqual([])
  })
})
