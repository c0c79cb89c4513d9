import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { ESLint } from "eslint"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const eslint = new ESLint({ cwd: repoRoot })

const ruleIdsFor = async (code: string): Promise<ReadonlyArray<string | null>> => {
  const [result] = await eslint.lintText(code, { filePath: "packages/cli-options/src/x.ts" })
  return result?.messages.map((message) => message.ruleId) ?? ["<no result>"]
}

describe("lint: @accord/cli-options imports no Accord package", () => {
  it.each(['import { DEFAULT_PORT } from "@accord/node"', 'import { parseConfig } from "@accord/server"'])(
    "refuses %s",
    async (code) => {
      expect(await ruleIdsFor(`${code}\n`)).toContain("no-restricted-imports")
    }
  )

  it("allows effect and Node", async () => {
    expect(
      await ruleIdsFor(
        'import { parseArgs } from "node:util"\nimport { Result } from "effect"\nexport { parseArgs, Result }\n'
      )
    ).toEqual([])
  })
})
