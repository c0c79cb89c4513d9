import { fileURLToPath } from "node:url"
import { gzipSync } from "node:zlib"
import { describe, expect, it } from "@effect/vitest"
import { rolldown } from "rolldown"

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const program = fileURLToPath(new URL("./fixtures/browser-program.ts", import.meta.url))

/** What a browser loads for the program: one minified ES module, built from the workspace packages' sources. */
const bundleOf = async (input: string) => {
  const bundle = await rolldown({
    input,
    cwd: repoRoot,
    platform: "browser",
    logLevel: "silent",
    resolve: {
      conditionNames: ["@accord/source", "import", "browser", "default"],
      extensionAlias: { ".js": [".ts", ".js"] }
    }
  })
  try {
    const { output } = await bundle.generate({ format: "esm", minify: true })
    const [chunk, ...others] = output
    if (chunk === undefined || chunk.type !== "chunk") throw new Error("the bundle has no entry chunk")
    return { chunk, others }
  } finally {
    await bundle.close()
  }
}

/** The budget of the bundle, gzip-compressed. Before the contract was apart from core: 112,908 bytes, 36,164 gzip. */
const MAX_GZIP_BYTES = 30 * 1024

/** Files of the server side: core's use cases, ports, domain records and HTTP pipeline, the stores, Node glue. */
const SERVER_SIDE =
  /(^|\/)(packages|@accord)\/(core|node|store-[^/]+|adapter-[^/]+|server|testkit|rate-limit|auth-jwt)\//

const { chunk, others } = await bundleOf(program)
const inputs = chunk.moduleIds.map((id) => id.replace(repoRoot, ""))
const gzipBytes = gzipSync(chunk.code).length
const figures = `${chunk.code.length} bytes minified, ${gzipBytes} gzip`

describe("a browser program using @accord/client (packages/client/test/fixtures/browser-program.ts)", () => {
  it("is one self-contained module: no chunk split off, nothing left to import", () => {
    expect(others).toStrictEqual([])
    expect(chunk.imports).toStrictEqual([])
    expect(chunk.dynamicImports).toStrictEqual([])
  })

  it("holds the client and the contract, and no file of core's use cases, ports or stores", () => {
    expect(inputs.filter((id) => SERVER_SIDE.test(id))).toStrictEqual([])
    expect(inputs.some((id) => id.startsWith("packages/client/src/"))).toBe(true)
    expect(inputs.some((id) => id.startsWith("packages/contract/src/"))).toBe(true)
    // Read by the OpenAPI generator only: neither it nor the operations' text reaches a client.
    expect(inputs.filter((id) => /packages\/contract\/src\/(openapi|operation-docs)\.ts$/.test(id))).toStrictEqual([])
  })

  it(`stays within ${MAX_GZIP_BYTES} bytes gzip`, () => {
    expect(gzipBytes, figures).toBeLessThanOrEqual(MAX_GZIP_BYTES)
  })
})
