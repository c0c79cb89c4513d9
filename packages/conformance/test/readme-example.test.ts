import { startWith } from "@accord/test-support"
import { auditTable, httpAudits, README_AUDITS_BEGIN, README_AUDITS_END } from "@accord/conformance/audits"
import { replaceBetween } from "@accord/cli-options"
import type { SeedInput } from "@accord/domain"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { koaHost } from "./koa-host.js"

// The README's examples. Its command runs in cli.test.ts; its script runs below against a host; its table lists every
// audit.

const read = (path: string) => readFileSync(new URL(path, import.meta.url), "utf8")
const readme = read("../README.md")

describe("README.md", () => {
  it("shows exactly the example file, verbatim, and no other TypeScript", () => {
    const blocks = [...readme.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map(([, code]) => code)
    expect(blocks).toEqual([read("./examples/audit-a-server.ts")])
  })

  it("lists every audit, in order, with its level, needs and title (written by npm run generate)", () => {
    expect(
      replaceBetween(readme, README_AUDITS_BEGIN, README_AUDITS_END, `${auditTable(httpAudits)}\n`),
      "out of date: run `npm run generate`"
    ).toBe(readme)
  })
})

describe("README.md: the script of one's own", () => {
  const servers: Array<{ close: () => Promise<void> }> = []
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()))
  })

  it("reports no MUST failure against a host without the API reference page, and its SHOULD failures", async () => {
    const seed: SeedInput = JSON.parse(read("../../../seed.json"))
    const server = await startWith(koaHost({ docs: false, dropAllowOn405: false }))(seed)
    servers.push(server)
    process.env["ACCORD_URL"] = `${server.url}/api`
    const { results, mustFailures } = await import("./examples/audit-a-server.js")
    expect(mustFailures).toEqual([])
    expect(results.filter((result) => result.status === "fail").map((result) => result.id)).toEqual([
      "ACC-docs-page-local-assets",
      "ACC-docs-cache-control",
      "ACC-docs-content-encoding",
      "ACC-routes-outside-prefix-404"
    ])
    expect(results.length).toBe(httpAudits.length)
  }, 60_000)
})
