import { readFileSync } from "node:fs"
import { OPERATION_ROUTES, operationRoutesModule, operations, PROBLEMS, problemCodesOf } from "@accord/contract"
import { describe, expect, it } from "@effect/vitest"

// src/operation-routes.generated.ts: the operations as plain data for a client, written by `npm run generate`.
const committed = readFileSync(new URL("../src/operation-routes.generated.ts", import.meta.url), "utf8")

describe("operation-routes.generated.ts", () => {
  it("is what `npm run generate` writes from the operations and the checks", () => {
    expect(committed, "out of date: run `npm run generate`").toBe(operationRoutesModule())
  })

  it("holds every operation's route, access, body, conditional kind, success status and problem codes", () => {
    for (const [id, operation] of Object.entries(operations)) {
      expect(OPERATION_ROUTES[id as keyof typeof operations], id).toStrictEqual({
        method: operation.method,
        path: operation.path,
        params: [...operation.path.matchAll(/\{([^}]+)\}/g)].map(([, name]) => name),
        query: operation.query === undefined ? [] : Object.keys(operation.query.fields),
        access: operation.access,
        body: operation.body !== undefined,
        conditional: operation.conditional,
        success: operation.success.status,
        problems: Object.fromEntries(problemCodesOf(operation).map((code) => [code, PROBLEMS[code].status]))
      })
    }
  })

  it("imports nothing at run time (types only), so a client that reads it carries no Schema", () => {
    const imports = committed.split("\n").filter((line) => /^\s*(import|export)\b.*\bfrom\b/.test(line))
    expect(imports.filter((line) => !line.startsWith("import type "))).toStrictEqual([])
  })
})
