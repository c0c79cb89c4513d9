import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { parseConfig } from "../src/config.js"
import { repoRoot } from "./cli-helpers.js"

/**
 * The root README's commands as a newcomer pastes them: every `npm start -- ...` line must start a server the "Try
 * it" curl lines reach, so each line's host and port (its flags over the defaults) are the curl lines' origin.
 */

const readme = readFileSync(join(repoRoot, "README.md"), "utf8")

/** The lines of the README's `sh` blocks, a line ending in `\` joined with the next, comments dropped. */
const shellLines = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)]
  .flatMap((block) => (block[1] ?? "").replace(/\\\n\s*/g, "").split("\n"))
  .map((line) => line.replace(/\s+#.*$/, "").trim())

const startLines = shellLines.filter((line) => line.startsWith("npm start -- "))
const curlOrigins = new Set(
  shellLines.filter((line) => line.startsWith("curl ")).map((line) => /https?:\/\/[^/\s]+/.exec(line)?.[0])
)

describe("the README's commands", () => {
  it("the curl lines all call one origin", () => {
    expect(curlOrigins.size).toBe(1)
    expect([...curlOrigins][0]).toBe("http://127.0.0.1:3000")
  })

  it.each(startLines)("`%s` serves where the curl lines call", (line) => {
    const parsed = parseConfig(line.slice("npm start -- ".length).split(/\s+/), {})
    expect(parsed._tag).toBe("Run")
    if (parsed._tag !== "Run") return
    expect(`http://${parsed.config.host}:${parsed.config.port}`).toBe([...curlOrigins][0])
  })

  it("has the lines the test reads (the Try it line and the other adapters)", () => {
    expect(startLines).toContain("npm start -- --seed seed.json")
    expect(startLines.filter((line) => line.includes("--adapter")).length).toBeGreaterThanOrEqual(3)
  })
})
