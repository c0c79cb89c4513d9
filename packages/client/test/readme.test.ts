import { readFileSync } from "node:fs"
import { describe, expect, it, vi } from "@effect/vitest"

const read = (relative: string) => readFileSync(new URL(relative, import.meta.url), "utf8")

/** The README's code block under `heading`. */
const exampleUnder = (heading: string) =>
  new RegExp(`## ${heading}\\n[\\s\\S]*?\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(read("../README.md"))?.[1]

/** Runs an example module and returns what it printed. */
const printedBy = async (load: () => Promise<unknown>) => {
  const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
  try {
    await load()
    return log.mock.calls
  } finally {
    log.mockRestore()
  }
}

describe("README", () => {
  // The browser example runs in Chromium, bundled three ways: test/bundle.test.ts.
  it.each([
    ["Example: in a browser", "./readme-browser-example.ts"],
    ["Example: against a server", "./readme-server-example.ts"],
    ["Example: a host test, in process", "./readme-in-process-example.ts"],
    ["Example: the Effect flavour", "./readme-effect-example.ts"]
  ])("shows the example file verbatim under %s", (heading, file) => {
    expect(exampleUnder(heading)).toBe(read(file))
  })

  it("the example against a server prints what its comments say", async () => {
    expect(await printedBy(() => import("./readme-server-example.js"))).toStrictEqual([
      [200, "en-US", 60],
      [404, "not_found"],
      ["validation_failed", [{ pointer: "/timezone", code: "invalid_format", detail: "must be a multiple of 15" }]]
    ])
  })

  it("the in-process host test prints what its comments say", async () => {
    expect(await printedBy(() => import("./readme-in-process-example.js"))).toStrictEqual([["pm_1"], [undefined]])
  })

  it("the Effect example prints what its comments say", async () => {
    expect(await printedBy(() => import("./readme-effect-example.js"))).toStrictEqual([[[true, "not_found"]]])
  })
})
