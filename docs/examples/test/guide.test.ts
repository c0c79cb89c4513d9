import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"
import { stripTypeScriptTypes } from "node:module"

const examplesDir = new URL("../", import.meta.url)
const read = (name: string) => readFileSync(new URL(name, examplesDir), "utf8")

/** The snippet files, in the order the guide shows them. */
const snippets = [
  "pack-packages.sh",
  "install-packages.sh",
  "use-cases.ts",
  "koa-mount.ts",
  "fastify-mount.ts",
  "express-mount.ts",
  "hono-mount.ts",
  "server-cli.sh",
  "host-test-dependencies.sh",
  "host.test.ts",
  "event-sink.ts"
]
const languageOf = (name: string) => (name.endsWith(".sh") ? "sh" : "ts")

describe("docs/embedding.md", () => {
  const guide = readFileSync(new URL("../../embedding.md", import.meta.url), "utf8")
  const blocks = [...guide.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map(([, language, code]) => ({ language, code }))

  it("shows exactly the snippet files, verbatim, in order, and no other code", () => {
    expect(blocks).toEqual(snippets.map((name) => ({ language: languageOf(name), code: read(name) })))
  })

  it("shows every snippet file docs/examples has (a new one must go into the guide)", () => {
    const files = readdirSync(examplesDir, { withFileTypes: true })
      .filter((entry) => entry.isFile() && /\.(ts|sh)$/.test(entry.name))
      .map((entry) => entry.name)
    expect(files.sort()).toEqual([...snippets].sort())
  })

  // The guide says to run a copied snippet with `node host.ts`: Node strips the types of erasable TypeScript only, and
  // refuses the rest (enum, namespace, parameter property) as this does.
  it("has only TypeScript that Node runs as printed, by stripping the types", () => {
    for (const name of snippets.filter((snippet) => snippet.endsWith(".ts"))) {
      expect(() => stripTypeScriptTypes(read(name)), name).not.toThrow()
    }
  })
})
