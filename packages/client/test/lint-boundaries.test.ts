import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { ESLint } from "eslint"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const eslint = new ESLint({ cwd: repoRoot })

/** The rule ids ESLint reports for `code` as if it were a file of the client's sources. */
const ruleIdsFor = async (code: string): Promise<ReadonlyArray<string | null>> => {
  const [result] = await eslint.lintText(code, { filePath: "packages/client/src/x.ts" })
  return result?.messages.map((message) => message.ruleId) ?? ["<no result>"]
}

// The client runs in browsers and any fetch runtime (README): the contract and effect only, no Node API.
describe("lint: packages/client/src", () => {
  it.each([
    'import { readFile } from "node:fs"',
    'import { createHash } from "crypto"',
    'import http from "http"',
    'import { ScryptPasswordHasherLive } from "@accord/node"',
    'import { operations } from "@accord/core"',
    'import { getLanguagePreferences } from "@accord/core"',
    'import { makeFetchHandler } from "@accord/adapter-fetch"',
    'import { makeAccordTestKit } from "@accord/testkit"',
    'import { MemoryStoreLive } from "@accord/store-memory"',
    'import Koa from "koa"',
    'import { Hono } from "hono"',
    'import express from "express"'
  ])("refuses %s", async (code) => {
    expect(await ruleIdsFor(`${code}\n`)).toContain("no-restricted-imports")
  })

  it.each(["process.env.HOME", 'Buffer.from("x")', "__dirname", 'require("fs")', "setImmediate(() => 0)"])(
    "refuses the Node global in %s",
    async (expression) => {
      expect(await ruleIdsFor(`export const value = ${expression}\n`)).toContain("no-restricted-globals")
    }
  )

  it("accepts the contract, effect and the web platform", async () => {
    expect(
      await ruleIdsFor(
        'import { operations } from "@accord/contract"\nimport { Schema } from "effect"\n' +
          "export const value = [operations, Schema, fetch, Request, new TextEncoder()]\n"
      )
    ).toStrictEqual([])
  })
})
