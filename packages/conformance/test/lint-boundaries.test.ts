import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import { ESLint } from "eslint"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const eslint = new ESLint({ cwd: repoRoot })

/** The rule ids ESLint reports for `code` as if it were the file at `filePath` (relative to the repo root). */
const ruleIdsFor = async (filePath: string, code: string): Promise<ReadonlyArray<string | null>> => {
  const [result] = await eslint.lintText(code, { filePath })
  return result?.messages.map((message) => message.ruleId) ?? ["<no result>"]
}

const expectClean = async (filePath: string, code: string) => expect(await ruleIdsFor(filePath, code)).toEqual([])
const expectRule = async (filePath: string, code: string, rule: string) =>
  expect(await ruleIdsFor(filePath, code)).toContain(rule)

describe("lint: architecture boundaries", () => {
  describe("packages/core/src", () => {
    it.each([
      'import Koa from "koa"',
      'import Router from "@koa/router"',
      'import Fastify from "fastify"',
      'import cors from "@fastify/cors"',
      'import pg from "pg"',
      'import { PGlite } from "@electric-sql/pglite"',
      'import pino from "pino"',
      'import { jwtVerify } from "jose"',
      'import express from "express"',
      'import { absolutePath } from "swagger-ui-dist"',
      'import "swagger-ui-dist/swagger-ui.css"',
      'import { MemoryStoreLive } from "@accord/store-memory"',
      'import { decoderFor } from "@accord/core"',
      'import { problemOf } from "@accord/node"',
      'export { createServer } from "@accord/adapter-koa"',
      'import { ScryptPasswordHasherLive } from "@accord/node"',
      'import { loadApiReference } from "@accord/api-reference"',
      'import type { Context } from "koa"'
    ])("refuses %s", async (code) => {
      await expectRule("packages/core/src/x.ts", `${code}\n`, "no-restricted-imports")
    })

    it.each([
      'import { readFile } from "node:fs"',
      'import { readFile } from "fs/promises"',
      'import { createHash } from "crypto"',
      'import http from "http"',
      'import { setTimeout } from "node:timers/promises"'
    ])("refuses a Node builtin anywhere in core: %s", async (code) => {
      await expectRule("packages/core/src/http/x.ts", code, "no-restricted-imports")
      await expectRule("packages/core/src/x.ts", code, "no-restricted-imports")
    })

    it.each(["process.env.HOME", 'Buffer.from("x")', "__dirname", 'require("fs")', "global", "setImmediate(() => 0)"])(
      "refuses the Node global in %s",
      async (expression) => {
        await expectRule("packages/core/src/http/x.ts", `export const value = ${expression}\n`, "no-restricted-globals")
        await expectRule("packages/domain/src/x.ts", `export const value = ${expression}\n`, "no-restricted-globals")
      }
    )

    it("allows effect and relative imports", async () => {
      await expectClean(
        "packages/core/src/http/x.ts",
        'import { Effect } from "effect"\nimport { problem } from "./problem.js"\nexport const value = Effect.as(Effect.void, problem)\n'
      )
    })

    it("allows @accord/contract, the API it serves, and @accord/domain, what it runs", async () => {
      await expectClean(
        "packages/core/src/http/x.ts",
        'import { operations } from "@accord/contract"\nimport { NotFound } from "@accord/domain"\nexport const value = [operations, NotFound]\n'
      )
    })

    it("has no Node corner any more: src/node is core like the rest", async () => {
      await expectRule("packages/core/src/node/x.ts", 'import { readFile } from "node:fs"\n', "no-restricted-imports")
    })
  })

  describe("packages/domain/src: values, records, ports and use cases, with no wire form and no HTTP", () => {
    it.each([
      'import { operations } from "@accord/contract"',
      'import type { PreferencesView } from "@accord/contract"',
      'import { makeHttpHandler } from "@accord/core"',
      'import { toHttpRequest } from "@accord/node"',
      'import { readFile } from "node:fs"',
      'import { createHash } from "crypto"',
      'import Koa from "koa"',
      'import { z } from "zod"',
      'import { describe } from "vitest"'
    ])("refuses %s", async (code) => {
      await expectRule("packages/domain/src/x.ts", `${code}\n`, "no-restricted-imports")
      await expectRule("packages/domain/src/use-cases/x.ts", `${code}\n`, "no-restricted-imports")
    })

    it("allows effect, the CLDR data of its canonical tags and its own modules", async () => {
      await expectClean(
        "packages/domain/src/x.ts",
        'import { Schema } from "effect"\nimport { getCanonicalLocales } from "@formatjs/intl-getcanonicallocales"\nimport { UserId } from "./values/ids.js"\nexport const parts = [Schema.String, getCanonicalLocales, UserId]\n'
      )
    })
  })

  describe("packages/contract/src: the API as data, over effect and the domain's values", () => {
    it.each([
      'import { makeHttpHandler } from "@accord/core"',
      'import { applyPatch } from "@accord/domain"',
      'import { createPublicPlanEntry } from "@accord/core"',
      'import { makeAccordClient } from "@accord/client"',
      'import { toHttpRequest } from "@accord/node"',
      'import { readFile } from "node:fs"',
      'import { createHash } from "crypto"',
      'import Koa from "koa"',
      'import { z } from "zod"'
    ])("refuses %s", async (code) => {
      await expectRule("packages/contract/src/x.ts", `${code}\n`, "no-restricted-imports")
    })

    it("refuses Node globals", async () => {
      await expectRule("packages/contract/src/x.ts", "export const value = process.env.HOME\n", "no-restricted-globals")
    })

    it("allows effect, its submodules, the domain's values, the domain's records as types, and its own modules", async () => {
      await expectClean(
        "packages/contract/src/wire/x.ts",
        'import { Schema } from "effect"\nimport * as SchemaAST from "effect/SchemaAST"\nimport { Email } from "@accord/domain/values"\nimport type { Preferences } from "@accord/domain"\nimport { operations } from "../operations.js"\nexport const parts = [Schema.String, SchemaAST, Email, operations]\nexport type Record = Preferences\n'
      )
    })
  })

  describe("packages/node/src", () => {
    it.each([
      'import Koa from "koa"',
      'import Router from "@koa/router"',
      'import Fastify from "fastify"',
      'import express from "express"',
      'import pg from "pg"',
      'import { MemoryStoreLive } from "@accord/store-memory"',
      'import { makePgStore } from "@accord/store-postgres"',
      'import { accordRouter } from "@accord/adapter-koa"',
      'import { start } from "@accord/server"'
    ])("refuses %s", async (code) => {
      await expectRule("packages/node/src/x.ts", `${code}\n`, "no-restricted-imports")
    })

    it("may import core and Node builtins, and use Node globals", async () => {
      await expectClean(
        "packages/node/src/x.ts",
        'import { createHash } from "node:crypto"\nimport { makeHttpHandler } from "@accord/core"\nexport const parts = [makeHttpHandler, createHash("sha256").update(Buffer.from(process.argv.join())).digest("hex")]\n'
      )
    })
  })

  describe("adapters", () => {
    it.each([
      'import { MemoryStoreLive } from "@accord/store-memory"',
      'import { makePgStore } from "@accord/store-postgres"',
      'import { start } from "@accord/server"'
    ])("refuse %s", async (code) => {
      await expectRule("packages/adapter-koa/src/x.ts", `${code}\n`, "no-restricted-imports")
      await expectRule("packages/adapter-fastify/src/x.ts", `${code}\n`, "no-restricted-imports")
      await expectRule("packages/adapter-fetch/src/x.ts", `${code}\n`, "no-restricted-imports")
    })

    it("may import core, @accord/node's bridge and their own framework", async () => {
      await expectClean(
        "packages/adapter-koa/src/x.ts",
        'import Koa from "koa"\nimport { createHttpHandler } from "@accord/core"\nimport { toHttpRequest } from "@accord/node/bridge"\nexport const parts = [Koa, createHttpHandler, toHttpRequest]\n'
      )
    })
  })

  describe("packages/adapter-fetch/src: runs on any fetch runtime, except its Node server (node.ts)", () => {
    it.each([
      'import { createServer } from "node:http"',
      'import { Readable } from "stream"',
      'import { toHttpRequest } from "@accord/node"',
      'import { serve } from "@hono/node-server"'
    ])("refuses %s", async (code) => {
      await expectRule("packages/adapter-fetch/src/x.ts", `${code}\n`, "no-restricted-imports")
    })

    it("refuses Node globals", async () => {
      await expectRule(
        "packages/adapter-fetch/src/x.ts",
        'export const value = Buffer.from("x")\n',
        "no-restricted-globals"
      )
    })

    it("allows core and WHATWG globals; node.ts may use Node", async () => {
      await expectClean(
        "packages/adapter-fetch/src/x.ts",
        'import { makeHttpHandler } from "@accord/core"\nexport const parts = [makeHttpHandler, new Response(null), new TextEncoder()]\n'
      )
      await expectClean(
        "packages/adapter-fetch/src/node.ts",
        'import { createServer } from "node:http"\nimport { listen } from "@accord/node/server"\nexport const parts = [createServer, listen, Buffer.from("x")]\n'
      )
    })
  })

  describe("stores", () => {
    it.each([
      'import { koaRouter } from "@accord/adapter-koa"',
      'import { start } from "@accord/server"',
      'import Koa from "koa"',
      'import Fastify from "fastify"',
      'import { tokenDigest } from "@accord/node"',
      'import { makeHttpHandler } from "@accord/core"',
      'import { PreferencesView } from "@accord/contract"'
    ])("refuse %s", async (code) => {
      await expectRule("packages/store-memory/src/x.ts", `${code}\n`, "no-restricted-imports")
      await expectRule("packages/store-postgres/src/x.ts", `${code}\n`, "no-restricted-imports")
    })

    it("may import the domain, node builtins and their driver", async () => {
      await expectClean(
        "packages/store-postgres/src/x.ts",
        'import pg from "pg"\nimport { randomUUID } from "node:crypto"\nimport { PlanEntries } from "@accord/domain"\nexport const parts = [pg, randomUUID, PlanEntries]\n'
      )
    })

    it("may import token digests alone (@accord/node/token-digest)", async () => {
      await expectClean(
        "packages/store-memory/src/x.ts",
        'import { tokenDigest } from "@accord/node/token-digest"\nexport const parts = [tokenDigest]\n'
      )
    })
  })

  describe("@accord/node by role: each package imports the entry points of the roles it uses", () => {
    it.each([
      'import { toHttpRequest } from "@accord/node"',
      'import { ScryptPasswordHasherLive } from "@accord/node/scrypt"',
      'import { tokenDigest } from "@accord/node/token-digest"'
    ])("an adapter refuses %s", async (code) => {
      for (const file of [
        "packages/adapter-koa/src/x.ts",
        "packages/adapter-fastify/src/x.ts",
        "packages/adapter-express/src/x.ts",
        "packages/adapter-fetch/src/node.ts"
      ])
        await expectRule(file, `${code}\n`, "no-restricted-imports")
    })

    it("an adapter may import the request bridge and the standalone server", async () => {
      for (const file of ["packages/adapter-express/src/x.ts", "packages/adapter-fetch/src/node.ts"])
        await expectClean(
          file,
          'import { toHttpRequest } from "@accord/node/bridge"\nimport { serve } from "@accord/node/server"\nexport const parts = [toHttpRequest, serve]\n'
        )
    })

    it.each([
      'import { tokenDigest } from "@accord/node"',
      'import { toHttpRequest } from "@accord/node/bridge"',
      'import { serve } from "@accord/node/server"',
      'import { ScryptPasswordHasherLive } from "@accord/node/scrypt"'
    ])("a store refuses %s", async (code) => {
      await expectRule("packages/store-memory/src/x.ts", `${code}\n`, "no-restricted-imports")
      await expectRule("packages/store-postgres/src/x.ts", `${code}\n`, "no-restricted-imports")
    })

    it("no Accord package imports the union meant for hosts, the server included", async () => {
      for (const dir of ["server", "testkit", "rate-limit", "auth-jwt", "api-reference"])
        await expectRule(
          `packages/${dir}/src/x.ts`,
          'import { serve } from "@accord/node"\nexport const parts = [serve]\n',
          "no-restricted-imports"
        )
    })

    it("the server may import every role", async () => {
      await expectClean(
        "packages/server/src/x.ts",
        'import { toHttpRequest } from "@accord/node/bridge"\nimport { serve } from "@accord/node/server"\nimport { ScryptPasswordHasherLive } from "@accord/node/scrypt"\nimport { tokenDigest } from "@accord/node/token-digest"\nexport const parts = [toHttpRequest, serve, ScryptPasswordHasherLive, tokenDigest]\n'
      )
    })
  })

  describe("published packages carry no test runner", () => {
    it.each([
      'import { describe } from "vitest"',
      'import { it } from "@effect/vitest"',
      'import fc from "fast-check"',
      'import { expect } from "@vitest/expect"'
    ])("refuse %s", async (code) => {
      for (const dir of ["core", "domain", "contract", "node", "store-memory", "store-postgres", "client", "server"])
        await expectRule(`packages/${dir}/src/x.ts`, `${code}\n`, "no-restricted-imports")
      // The audits users run (accord-conformance) too: the test machinery left for @accord/test-support.
      await expectRule("packages/conformance/src/x.ts", `${code}\n`, "no-restricted-imports")
      await expectRule("packages/conformance/src/audits/x.ts", `${code}\n`, "no-restricted-imports")
    })

    it("the private test machinery may import them (packages/test-support/src)", async () => {
      await expectClean(
        "packages/test-support/src/x.ts",
        'import { describe } from "@effect/vitest"\nimport fc from "fast-check"\nimport { send } from "@accord/conformance"\nexport const parts = [describe, fc, send]\n'
      )
    })
  })

  describe("type safety rules", () => {
    it("refuses any", async () => {
      await expectRule(
        "packages/server/src/x.ts",
        "export const value: any = 1\n",
        "@typescript-eslint/no-explicit-any"
      )
    })

    it("refuses @ts-ignore and @ts-expect-error", async () => {
      await expectRule(
        "packages/server/src/x.ts",
        "// @ts-ignore\nexport const value = 1\n",
        "@typescript-eslint/ban-ts-comment"
      )
      await expectRule(
        "packages/server/src/x.ts",
        "// @ts-expect-error\nexport const value = 1\n",
        "@typescript-eslint/ban-ts-comment"
      )
    })
  })
})
