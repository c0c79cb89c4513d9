import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { ESLint } from "eslint"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const eslint = new ESLint({ cwd: repoRoot })

/** The rule ids ESLint reports for `code` as if it were a file of the client's sources (by default the light client's). */
const ruleIdsFor = async (code: string, file = "x.ts"): Promise<ReadonlyArray<string | null>> => {
  const [result] = await eslint.lintText(code, { filePath: `packages/client/src/${file}` })
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

  it("accepts the contract's plain routes, types of the contract and effect, and the web platform", async () => {
    expect(
      await ruleIdsFor(
        'import { OPERATION_ROUTES } from "@accord/contract/routes"\n' +
          'import { parseWebhookSecrets } from "@accord/contract/webhook-secrets"\n' +
          'import type { Operations } from "@accord/contract"\nimport type { Effect } from "effect"\n' +
          "export type Both = [Operations, Effect.Effect<void>]\n" +
          "export const value = [OPERATION_ROUTES, parseWebhookSecrets, fetch, Request, new TextEncoder()]\n"
      )
    ).toStrictEqual([])
  })
})

// The default client carries nothing of effect (README, "Bundle size"): Schemas in validated.ts and events-stream.ts,
// effect in effect.ts.
describe("lint: the default client's files, apart from validated.ts, effect.ts and events-stream.ts", () => {
  it.each([
    'import { Schema } from "effect"',
    'import { Effect } from "effect"',
    'import * as Data from "effect/Data"',
    'import { operations } from "@accord/contract"',
    'import { ProblemSchema } from "@accord/contract"',
    'import { FIELD_ISSUE_CODES } from "@accord/domain/values"'
  ])("refuses %s at run time", async (code) => {
    expect(await ruleIdsFor(`${code}\n`)).toContain("no-restricted-imports")
  })

  it.each([
    [
      "validated.ts",
      'import { operations, ProblemSchema } from "@accord/contract"\nimport { Schema } from "effect"\n' +
        "export const value = [operations, ProblemSchema, Schema]\n"
    ],
    ["effect.ts", 'import { Context, Effect, Layer } from "effect"\nexport const value = [Context, Effect, Layer]\n'],
    [
      "events-stream.ts",
      'import { AccordEvent } from "@accord/contract"\nimport { Schema } from "effect"\n' +
        "export const value = Schema.decodeUnknownResult(AccordEvent)\n"
    ]
  ])("accepts effect and the Schemas in %s", async (file, code) => {
    expect(await ruleIdsFor(code, file)).toStrictEqual([])
  })

  it.each([
    ["validated.ts", 'import { makeAccordTestKit } from "@accord/testkit"'],
    ["effect.ts", 'import { readFile } from "node:fs"'],
    ["events-stream.ts", 'import { createServer } from "node:http"']
  ])("still refuses what no client file may import in %s", async (file, code) => {
    expect(await ruleIdsFor(`${code}\n`, file)).toContain("no-restricted-imports")
  })
})
