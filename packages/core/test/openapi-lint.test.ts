import { createConfig, lintFromString } from "@redocly/openapi-core"
import { Document, Spectral } from "@stoplight/spectral-core"
import { Json } from "@stoplight/spectral-parsers"
import { describe, expect, it } from "@effect/vitest"
import { makeOpenApiDocument } from "@accord/contract"
import { EXPECTED_WARNINGS, redoclyConfig, spectralRuleset } from "./openapi-lint-rules.js"

// The document as /api/openapi.json serves it. Both linters run in process on this string: no file, no network (the
// document has no external $ref, and both rulesets are built into the packages).
const source = JSON.stringify(makeOpenApiDocument({ serverUrl: "/api" }), null, 2)

describe("OpenAPI document lint (rules and reasons: openapi-lint-rules.ts)", () => {
  it("has no Spectral spectral:oas error, and only the explained warnings", async () => {
    const spectral = new Spectral()
    spectral.setRuleset(spectralRuleset)
    const results = await spectral.run(new Document(source, Json, "openapi.json"))
    // Spectral's severities: 0 error, 1 warning, 2 information, 3 hint.
    const shown = results.map((result) => `${result.code} at ${result.path.join(".")}: ${result.message}`)
    expect(
      results.filter((result) => result.severity === 0).map((result) => result.code),
      shown.join("\n")
    ).toEqual([])
    expect(results.map((result) => String(result.code)).sort(), shown.join("\n")).toEqual([
      ...EXPECTED_WARNINGS.spectral
    ])
  })

  it("has no Redocly recommended error, and only the explained warnings", async () => {
    const config = await createConfig({ ...redoclyConfig, extends: [...redoclyConfig.extends] })
    const problems = await lintFromString({ source, absoluteRef: "/openapi.json", config })
    const shown = problems.map((problem) => `${problem.ruleId} at ${problem.location[0]?.pointer}: ${problem.message}`)
    expect(
      problems.filter((problem) => problem.severity === "error").map((problem) => problem.ruleId),
      shown.join("\n")
    ).toEqual([])
    expect(problems.map((problem) => problem.ruleId).sort(), shown.join("\n")).toEqual([...EXPECTED_WARNINGS.redocly])
  })
})
