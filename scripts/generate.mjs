// `npm run generate`: rewrites every generated artefact of the repository from what it is generated from, reading the
// built packages. Each artefact has a test that fails, saying to run `npm run generate`, while the committed file
// differs from a fresh generation (docs/contributing.md, "Generated files").
// It runs in two stages, so that a new operation needs one command: `--sources` rewrites the generated sources (built
// with `tsc -b --noCheck` first, since a stale generated source does not type-check), then, once `tsc -b` has built
// and checked them, the rest is made from the fresh build (the client's bundles read the built routes).
import { readFileSync, writeFileSync } from "node:fs"
import { argv, stdout } from "node:process"
import { URL } from "node:url"
import { replaceBetween } from "@accord/cli-options"
import { makeOpenApiDocument, operationRoutesModule } from "@accord/contract"
import { API_DOC_TABLES } from "@accord/contract/docs-tables"
import { auditTable, httpAudits, README_AUDITS_BEGIN, README_AUDITS_END } from "@accord/conformance/audits"
// A test helper in TypeScript, which Node loads by stripping its types: it bundles the built packages.
import { readmeWithOptions } from "../packages/server/dist/options.js"
import { bundleAll, EXAMPLES, readmeWithSizes, sizesTable, validatedExample } from "../packages/client/test/bundles.ts"

/**
 * The registry: each generated file (relative to the repository's root) and how its text is made from its current
 * text (undefined when it does not exist yet). Add an artefact here, and its freshness test beside its owner.
 */
export const GENERATED = [
  {
    // packages/contract/test/operation-routes.test.ts
    file: "packages/contract/src/operation-routes.generated.ts",
    source: true,
    generate: () => operationRoutesModule()
  },
  {
    // docs/examples/test/api-tables.test.ts: the route table and the order of checks
    file: "docs/api.md",
    generate: (current) =>
      API_DOC_TABLES.reduce((text, { begin, end, table }) => replaceBetween(text, begin, end, `${table()}\n`), current)
  },
  {
    // packages/conformance/test/readme-example.test.ts: every audit, in order
    file: "packages/conformance/README.md",
    generate: (current) =>
      replaceBetween(current, README_AUDITS_BEGIN, README_AUDITS_END, `${auditTable(httpAudits)}\n`)
  },
  {
    // packages/server/test/options.test.ts: the option list, from the option table
    file: "packages/server/README.md",
    generate: (current) => readmeWithOptions(current)
  },
  {
    // packages/core/test/openapi.test.ts
    file: "packages/core/test/openapi.expected.json",
    generate: () => `${JSON.stringify(makeOpenApiDocument({ serverUrl: "/api" }), null, 2)}\n`
  },
  {
    // packages/client/test/bundle.test.ts; before the sizes, which bundle it
    file: EXAMPLES.validated,
    generate: () => validatedExample(readFileSync(new URL(`../${EXAMPLES.default}`, import.meta.url), "utf8"))
  },
  {
    // packages/client/test/bundle.test.ts: the README's browser example by esbuild, rolldown and bun
    file: "packages/client/README.md",
    generate: async (current) => readmeWithSizes(current, sizesTable(await bundleAll()))
  }
]

const root = new URL("../", import.meta.url)

const currentText = (url) => {
  try {
    return readFileSync(url, "utf8")
  } catch (error) {
    if (error.code === "ENOENT") return undefined
    throw error
  }
}

const sourcesOnly = argv.includes("--sources")

for (const { file, source, generate } of GENERATED) {
  if (sourcesOnly && source !== true) continue
  const url = new URL(file, root)
  const current = currentText(url)
  const fresh = await generate(current)
  if (fresh !== current) writeFileSync(url, fresh)
  stdout.write(`${file}: ${fresh === current ? "already current" : "rewritten"}\n`)
}
