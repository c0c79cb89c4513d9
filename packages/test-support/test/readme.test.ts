import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8")
const readme = read("../README.md")

describe("README.md", () => {
  it("names the one-line suites that the test files it cites run", () => {
    const cited = [...readme.matchAll(/^- `(packages\/[^`]+\.test\.ts)`: `(.+)`$/gm)]
    expect(cited.length).toBe(2)
    for (const [, file = "", line = ""] of cited) expect(read(`../../../${file}`), file).toContain(line)
  })

  it("names every export of the package, in code", async () => {
    const inCode = [...readme.matchAll(/`([^`\n]+)`/g)].map(([, code = ""]) => code).join(" ")
    for (const name of Object.keys(await import("@accord/test-support")))
      expect(inCode, name).toMatch(new RegExp(`\\b${name}\\b`))
  })
})
