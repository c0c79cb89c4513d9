import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { replaceBetween } from "@accord/cli-options"
import { API_DOC_TABLES } from "@accord/contract/docs-tables"

const page = readFileSync(new URL("../../api.md", import.meta.url), "utf8")

// docs/api.md's route table and order of checks are the contract's declarations written out (docs/contributing.md,
// "Generated files"): never typed by hand, so they cannot drift from what the server does.
describe("docs/api.md's generated tables", () => {
  it.each(API_DOC_TABLES.map((entry) => [entry.begin, entry] as const))("%s is current", (_, { begin, end, table }) => {
    expect(replaceBetween(page, begin, end, `${table()}\n`), "out of date: run `npm run generate`").toBe(page)
  })
})
