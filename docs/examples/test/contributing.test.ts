import { existsSync, readFileSync } from "node:fs"
import { dirname } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { guideKinds, repoRoot, walkThrough } from "./contributing-guide.js"

/** Each code block of the walk-through: the file its first line names, and the lines quoted from it. */
const quotes = [...walkThrough.matchAll(/^```ts\n\/\/ (\S+)\n([\s\S]*?)^```$/gm)].map(([, file = "", code = ""]) => ({
  file,
  code
}))

/**
 * Text as the quote test compares it: without a comma that ends a line, which an entry gets once another follows it
 * (a quoted operation stays quoted as it is when one is added beside it).
 */
const comparable = (text: string): string => text.replace(/,$/gm, "")

describe("docs/contributing.md (changing the API)", () => {
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
    expect(comparable(readFileSync(new URL(file, repoRoot), "utf8"))).toContain(comparable(code))
  })

  it("still quotes the worked example with an operation added after it", () => {
    const [entry] = quotes
    const source = readFileSync(new URL("packages/contract/src/operations/payments.ts", repoRoot), "utf8")
    const end = source.indexOf("  })\n}", source.indexOf("setDefaultPaymentMethod: defineOperation"))
    expect(end).toBeGreaterThan(0)
    const withAnother = `${source.slice(0, end)}  }),\n  another: defineOperation({})\n}${source.slice(end + 6)}`
    expect(comparable(withAnother)).toContain(comparable(entry?.code ?? "?"))
  })

  it("names only files that exist", () => {
    const named = [...walkThrough.matchAll(/`((?:packages|docs)\/[\w./-]+\.(?:ts|json|md))`/g)].map(([, path]) => path)
    expect(named.length).toBeGreaterThan(0)
    expect(named.filter((path) => path !== undefined && !existsSync(new URL(path, repoRoot)))).toEqual([])
  })

  it("lists each kind of change, every file in a folder that exists, every coverage test a test that exists", () => {
    expect(guideKinds.map((kind) => kind.name)).toEqual([
      "operation",
      "method",
      "port",
      "port-method",
      "error",
      "event"
    ])
    for (const { name, rows } of guideKinds) {
      expect(rows.length, name).toBeGreaterThan(0)
      for (const { file, how } of rows) {
        const path = file.includes("<") ? dirname(file) : file
        expect(existsSync(new URL(path, repoRoot)), `${name}: ${file}`).toBe(true)
        expect(
          ["compile error", "this page"].includes(how) || how.startsWith("coverage test "),
          `${name}: ${how}`
        ).toBe(true)
        const test = how.startsWith("coverage test ") ? how.slice("coverage test ".length) : undefined
        if (test !== undefined) expect(existsSync(new URL(test, repoRoot)), `${name}: ${test}`).toBe(true)
      }
    }
  })
})
