import { describe, expect, it } from "@effect/vitest"
import { fileURLToPath } from "node:url"
import ts from "typescript"

// What an editor shows when a user hovers a problem's code: the literal codes the operation may be answered with,
// not the alias that computes them (`ProblemCodeOf<TypedOperation<...>>`), which tells a reader nothing. The
// language service's hover text is the checker's `typeToString`, so compiling a small file and asking the checker
// the type of its variables is the editor's answer.
const file = fileURLToPath(new URL("./fixtures/hover.ts", import.meta.url))
const program = ts.createProgram([file], {
  target: ts.ScriptTarget.ES2022,
  lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  exactOptionalPropertyTypes: true,
  noEmit: true,
  skipLibCheck: true,
  customConditions: ["@accord/source"],
  allowImportingTsExtensions: true
})
const checker = program.getTypeChecker()
const source = program.getSourceFile(file)

/** The hover text of the variable `name` declared in the fixture. */
const hoverOf = (name: string): string => {
  let text: string | undefined
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === name)
      text = checker.typeToString(checker.getTypeAtLocation(node.name), undefined, ts.TypeFormatFlags.NoTruncation)
    ts.forEachChild(node, visit)
  }
  if (source !== undefined) visit(source)
  if (text === undefined) throw new Error(`no variable ${name} in ${file}`)
  return text
}

describe("hover text of the client's types", () => {
  it("compiles the fixture without errors", () => {
    expect(ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"))).toEqual(
      []
    )
  })

  it("a problem's code shows the operation's codes", () => {
    const code = hoverOf("code")
    expect(code).not.toMatch(/ProblemCodeOf|TypedOperation/)
    for (const literal of ['"not_found"', '"precondition_failed"', '"insufficient_scope"', '"validation_failed"'])
      expect(code).toContain(literal)
    expect(code).not.toContain('"method_not_allowed"')
  })

  it("the Effect flavour's AccordProblem shows the codes and the statuses", () => {
    const code = hoverOf("effectCode")
    expect(code).not.toMatch(/ProblemCodeOf|TypedOperation/)
    expect(code).toContain('"precondition_failed"')
    const status = hoverOf("effectStatus")
    expect(status).not.toMatch(/ProblemStatusOf|ProblemCodeOf|TypedOperation/)
    expect(status).toMatch(/\b412\b/)
  })

  it("a problem's status shows the statuses", () => {
    const status = hoverOf("status")
    expect(status).not.toMatch(/ProblemStatusOf|ProblemCodeOf|TypedOperation/)
    expect(status).toMatch(/\b404\b/)
  })
})
