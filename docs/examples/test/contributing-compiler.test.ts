import { globSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "@effect/vitest"
import ts from "typescript"
import { filePattern, guideKinds, repoRoot } from "./contributing-guide.js"

// Issue 38: docs/contributing.md lists, for each kind of change, the files where the compiler asks for something.
// This test begins each kind of change as a contributor would (an operation's entry, a port in StoreServices, an
// error in DomainError, an event in DOMAIN_EVENTS...), in memory, type-checks every package's sources with it, and
// compares the files that then have errors with the page's "compile error" rows. A change of some kinds is asked for in
// waves (EVENT_DOCS only asks once EVENTS has the type): each wave adds what the previous one asked for.

const root = fileURLToPath(repoRoot)

/** The compiler options of the repository's projects, reading each package from its sources (`@accord/source`). */
const OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2023.d.ts"],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  exactOptionalPropertyTypes: true,
  noUncheckedIndexedAccess: true,
  noImplicitOverride: true,
  verbatimModuleSyntax: true,
  skipLibCheck: true,
  noEmit: true,
  types: ["node"],
  customConditions: ["@accord/source"],
  allowImportingTsExtensions: true
}

const ROOTS = globSync("packages/*/src/**/*.ts", { cwd: root })
  .filter((file) => !file.endsWith(".d.ts"))
  .map((file) => `${root}${file}`)

/** A change begun in memory: a file's text with `find` replaced by `replace`, or a new file (`find` undefined). */
interface Edit {
  readonly file: string
  readonly find?: string
  readonly replace: string
}

const parsed = new Map<string, ts.SourceFile>()
let previous: ts.Program | undefined

/** The program over every package's sources with `edits` applied; unchanged files are parsed once for all programs. */
const programWith = (edits: ReadonlyArray<Edit>): ts.Program => {
  const overlay = new Map<string, string>()
  for (const { file, find, replace } of edits) {
    const path = `${root}${file}`
    const current = overlay.get(path) ?? (find === undefined ? "" : readFileSync(path, "utf8"))
    if (find !== undefined && !current.includes(find)) throw new Error(`${file}: the test's anchor is gone: ${find}`)
    overlay.set(path, find === undefined ? replace : current.replace(find, replace))
  }
  const host = ts.createCompilerHost(OPTIONS, true)
  const { fileExists, readFile, getSourceFile } = host
  host.fileExists = (file) => overlay.has(file) || fileExists(file)
  host.readFile = (file) => overlay.get(file) ?? readFile(file)
  host.getSourceFile = (file, language, onError) => {
    const text = overlay.get(file)
    if (text !== undefined) return ts.createSourceFile(file, text, language)
    const known = parsed.get(file)
    if (known !== undefined) return known
    const made = getSourceFile(file, language, onError)
    if (made !== undefined) parsed.set(file, made)
    return made
  }
  const rootNames = [...ROOTS, ...[...overlay.keys()].filter((file) => !ROOTS.includes(file))]
  previous = ts.createProgram({
    rootNames,
    options: OPTIONS,
    host,
    ...(previous !== undefined && { oldProgram: previous })
  })
  return previous
}

/** How many errors each file has, by its path in the repository. */
const errorsByFile = (program: ts.Program): ReadonlyMap<string, number> => {
  const counts = new Map<string, number>()
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const file = diagnostic.file?.fileName.replace(root, "") ?? "(no file)"
    counts.set(file, (counts.get(file) ?? 0) + 1)
  }
  return counts
}

let baseline: ReadonlyMap<string, number> | undefined

/** The files with more errors than the sources have as they are, once `edits` are made. */
const askedFor = (edits: ReadonlyArray<Edit>): ReadonlyArray<string> => {
  baseline ??= errorsByFile(programWith([]))
  const before = baseline
  return [...errorsByFile(programWith(edits))]
    .filter(([file, count]) => count > (before.get(file) ?? 0))
    .map(([file]) => file)
    .sort()
}

const PAYMENTS = "packages/contract/src/operations/payments.ts"
const NEW_OPERATION = (method: string, success: string): Edit => ({
  file: PAYMENTS,
  find: "export const paymentOperations = {",
  replace: `export const paymentOperations = {
  scratchOperation: defineOperation({
    operationId: "scratchOperation",
    method: "${method}",
    path: "/payments/v1/scratch/{id}/",
    access: "user",
    params: Schema.Struct({ id: PaymentMethodId }),
    success: ${success},
    errors: ["NotFound"],
    records: { reads: "payment_methods", item: "id" }
  }),`
})

/** Each kind of change, begun: its waves of edits, each adding to the last. */
const KINDS: Readonly<Record<string, ReadonlyArray<ReadonlyArray<Edit>>>> = {
  operation: [[NEW_OPERATION("GET", "{ status: 200, schema: PaymentMethodView }")]],
  method: [[{ ...NEW_OPERATION("DELETE", "{ status: 204 }") }]],
  port: [
    [
      {
        file: "packages/domain/src/ports/scratch-store.ts",
        replace: `import { Context, type Effect } from "effect"
export class ScratchStore extends Context.Service<ScratchStore, { readonly count: Effect.Effect<number> }>()(
  "@accord/domain/ScratchStore"
) {}
`
      },
      {
        file: "packages/domain/src/services.ts",
        find: "export type StoreServices =",
        replace: `import type { ScratchStore } from "./ports/scratch-store.js"
export type StoreServices = ScratchStore | StoreServicesBefore
type StoreServicesBefore =`
      }
    ]
  ],
  "port-method": [
    [
      {
        file: "packages/domain/src/ports/payment-methods.ts",
        find: "    readonly listByUser:",
        replace:
          "    readonly scratch: (userId: UserId) => Effect.Effect<number, Unavailable>\n    readonly listByUser:"
      }
    ]
  ],
  error: [
    [
      {
        file: "packages/domain/src/errors.ts",
        // The union as it is, renamed, and the error added to it: whatever the union's layout.
        find: "export type DomainError =",
        replace: `export class ScratchError extends Data.TaggedError("ScratchError") {}
export type DomainError = ScratchError | DomainErrorBefore
type DomainErrorBefore =`
      }
    ],
    [
      {
        file: "packages/contract/src/domain-errors.ts",
        find: "export const DOMAIN_ERRORS = {",
        replace: `export const DOMAIN_ERRORS = {
  ScratchError: answer({ codes: ["scratch_refused"], problem: () => problem("scratch_refused", "one") }),`
      }
    ],
    [
      {
        file: "packages/contract/src/problems.ts",
        find: "export const PROBLEMS = {",
        replace: `export const PROBLEMS = {
  scratch_refused: { status: 418, detail: { one: "One situation.", other: "Another." } },`
      }
    ]
  ],
  event: [
    [
      {
        file: "packages/domain/src/events.ts",
        find: "export const DOMAIN_EVENTS = {",
        replace: `export const DOMAIN_EVENTS = {
  "scratch.happened": Schema.Struct({ type: Schema.Literal("scratch.happened"), userId: Schema.toType(UserId) }),`
      }
    ],
    [
      {
        file: "packages/contract/src/events.ts",
        find: "export const EVENTS = {",
        replace: `export const EVENTS = {
  "scratch.happened": wireEvent({ data: Schema.Struct({}), toData: () => ({}) }),`
      }
    ]
  ]
}

describe("docs/contributing.md, the files where the compiler asks for something", () => {
  it.each(guideKinds.map((kind) => [kind.name, kind] as const))(
    "%s: the page's compile errors are the files the compiler names when the change is begun",
    (name, kind) => {
      const waves = KINDS[name]
      if (waves === undefined) throw new Error(`no change of the kind ${name} is begun here`)
      const asked = new Set<string>()
      let edits: ReadonlyArray<Edit> = []
      for (const wave of waves) {
        edits = [...edits, ...wave]
        for (const file of askedFor(edits)) asked.add(file)
      }
      const listed = kind.rows.filter((row) => row.how === "compile error").map((row) => filePattern(row.file))
      // Every file the compiler names is one the page lists, and every one the page lists is named.
      expect([...asked].filter((file) => !listed.some((pattern) => pattern.test(file)))).toEqual([])
      expect(listed.filter((pattern) => ![...asked].some((file) => pattern.test(file))).map(String)).toEqual([])
    },
    600_000
  )

  it("the sources as they are compile with the options above: each error counted is one the change made", () => {
    baseline ??= errorsByFile(programWith([]))
    expect([...baseline]).toEqual([])
  }, 600_000)
})
