import { readFileSync } from "node:fs"
import { describe, expect, it, vi } from "@effect/vitest"

const read = (relative: string) => readFileSync(new URL(relative, import.meta.url), "utf8")

describe("README", () => {
  it("shows test/readme-example.ts verbatim as its example", () => {
    const block = /## Example\n[\s\S]*?```ts\n([\s\S]*?)```/.exec(read("../README.md"))?.[1]
    expect(block).toBe(read("./readme-example.ts"))
  })

  it("the example prints what its comments say", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
    try {
      await import("./readme-example.js")
      expect(log.mock.calls).toStrictEqual([
        ["0.0.0.0", 8080, true, undefined],
        [
          '--port (PORT) must be an integer from 0 to 65535, got "http"\n' +
            '--verbose (VERBOSE) must be true or false, got "yes"'
        ],
        [
          `Usage: serve [options]

Listening:
  --host HOST                address to listen on (HOST, default 127.0.0.1)
  --port PORT                port, 0 picks a free one (PORT, default 3000)

Output:
  --[no-]verbose             log more (VERBOSE, default false)
  SEED_FILE=FILE             JSON file loaded at start

  -h, --help                 print this help and exit
`
        ]
      ])
    } finally {
      log.mockRestore()
    }
  })
})
