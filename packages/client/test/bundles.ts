import { execFile } from "node:child_process"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import { gzipSync } from "node:zlib"
import { replaceBetween } from "@accord/cli-options"
import { build, version as esbuildVersion } from "esbuild"
import { rolldown, VERSION as rolldownVersion } from "rolldown"

// The README's browser example as a browser app's bundler makes it: esbuild (Angular CLI, tsup), rolldown (Vite) and
// `bun build`, minified ES modules for the browser, from the built packages (dist, as a user's bundler sees them; run
// `tsc -b` first). test/bundle.test.ts checks what is in each bundle, its size and that it runs in Chromium;
// `npm run generate` (scripts/generate.mjs) writes the sizes into the README. Imported by Node itself there (its type
// stripping): this file imports packages only, no relative TypeScript module.

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))

/** The README's browser example ("Example: in a browser"), and the same program on the validated client. */
export const EXAMPLES = {
  default: "packages/client/test/readme-browser-example.ts",
  validated: "packages/client/test/fixtures/browser-validated.ts"
} as const

export type Example = keyof typeof EXAMPLES

/** The validated twin of the README's browser example: the same program, importing `@accord/client/validated`. */
export const validatedExample = (example: string): string => {
  const twin = example.replace('from "@accord/client"', 'from "@accord/client/validated"')
  if (twin === example) throw new Error(`${EXAMPLES.default} imports no "@accord/client"`)
  return `// Written by \`npm run generate\` from ${EXAMPLES.default}, on the validated client.\n${twin}`
}

export const BUNDLERS = ["esbuild", "rolldown", "bun"] as const
export type Bundler = (typeof BUNDLERS)[number]

export interface Bundle {
  readonly bundler: Bundler
  readonly version: string
  readonly code: string
  /** The files with code in the bundle, relative to the repository's root. */
  readonly inputs: ReadonlyArray<string>
  /** Other chunks and the imports left in the bundle: none for one self-contained module. */
  readonly leftOver: ReadonlyArray<string>
  readonly gzipBytes: number
}

const bundleOf = (
  bundler: Bundler,
  version: string,
  code: string,
  inputs: ReadonlyArray<string>,
  leftOver: ReadonlyArray<string>
): Bundle => ({ bundler, version, code, inputs, leftOver, gzipBytes: gzipSync(code).length })

/** esbuild's metafile and Bun's (the same format): the files with bytes in the one output, and what it imports. */
interface Metafile {
  readonly outputs: Readonly<
    Record<
      string,
      {
        readonly inputs: Readonly<Record<string, { readonly bytesInOutput: number }>>
        readonly imports: ReadonlyArray<{ readonly path: string }>
      }
    >
  >
}

const fromMetafile = (metafile: Metafile) => {
  const outputs = Object.entries(metafile.outputs)
  const inputs = outputs.flatMap(([, output]) =>
    Object.entries(output.inputs).flatMap(([file, { bytesInOutput }]) => (bytesInOutput > 0 ? [file] : []))
  )
  const leftOver = [
    ...outputs.slice(1).map(([file]) => file),
    ...outputs.flatMap(([, output]) => output.imports.map(({ path }) => path))
  ]
  return { inputs, leftOver }
}

const withEsbuild = async (entry: string): Promise<Bundle> => {
  const result = await build({
    entryPoints: [entry],
    absWorkingDir: repoRoot,
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    outfile: "app.js",
    write: false,
    metafile: true,
    logLevel: "silent"
  })
  const { inputs, leftOver } = fromMetafile(result.metafile)
  return bundleOf("esbuild", esbuildVersion, result.outputFiles[0]?.text ?? "", inputs, leftOver)
}

const withRolldown = async (entry: string): Promise<Bundle> => {
  const bundle = await rolldown({
    input: join(repoRoot, entry),
    cwd: repoRoot,
    platform: "browser",
    logLevel: "silent"
  })
  try {
    const { output } = await bundle.generate({ format: "esm", minify: true })
    const [chunk, ...others] = output
    if (chunk === undefined || chunk.type !== "chunk") throw new Error("rolldown: the bundle has no entry chunk")
    const inputs = Object.entries(chunk.modules).flatMap(([id, module]) =>
      module.renderedLength > 0 ? [relative(repoRoot, id)] : []
    )
    const leftOver = [...others.map((file) => file.fileName), ...chunk.imports, ...chunk.dynamicImports]
    return bundleOf("rolldown", rolldownVersion, chunk.code, inputs, leftOver)
  } finally {
    await bundle.close()
  }
}

const run = promisify(execFile)
const bun = join(repoRoot, "node_modules/.bin/bun")

const withBun = async (entry: string): Promise<Bundle> => {
  const directory = await mkdtemp(join(tmpdir(), "accord-bun-"))
  try {
    const [outfile, metafile] = [join(directory, "app.js"), join(directory, "meta.json")]
    await run(
      bun,
      [
        "build",
        `./${entry}`,
        "--minify",
        "--format=esm",
        "--target=browser",
        `--outfile=${outfile}`,
        `--metafile=${metafile}`
      ],
      { cwd: repoRoot }
    )
    const { inputs, leftOver } = fromMetafile(JSON.parse(await readFile(metafile, "utf8")) as Metafile)
    const { stdout: version } = await run(bun, ["--version"])
    return bundleOf("bun", version.trim(), await readFile(outfile, "utf8"), inputs, leftOver)
  } finally {
    await rm(directory, { recursive: true, force: true })
  }
}

/** `example` bundled by `bundler`, minified, for the browser. */
export const bundleWith = (bundler: Bundler, example: Example): Promise<Bundle> => {
  const entry = EXAMPLES[example]
  switch (bundler) {
    case "esbuild":
      return withEsbuild(entry)
    case "rolldown":
      return withRolldown(entry)
    case "bun":
      return withBun(entry)
  }
}

/** Every example by every bundler, one after the other (the machine is shared). */
export const bundleAll = async (): Promise<ReadonlyArray<{ readonly example: Example; readonly bundle: Bundle }>> => {
  const bundles: Array<{ readonly example: Example; readonly bundle: Bundle }> = []
  for (const bundler of BUNDLERS)
    for (const example of Object.keys(EXAMPLES) as ReadonlyArray<Example>)
      bundles.push({ example, bundle: await bundleWith(bundler, example) })
  return bundles
}

const kilobytes = (bytes: number): string => `${(bytes / 1000).toFixed(1)} KB`

const cell = (bundle: Bundle | undefined): string =>
  bundle === undefined ? "" : `${kilobytes(bundle.gzipBytes)} (${kilobytes(bundle.code.length)} minified)`

/** The README's table of sizes: one row per bundler, gzip (and minified) for the default and the validated client. */
export const sizesTable = (bundles: ReadonlyArray<{ readonly example: Example; readonly bundle: Bundle }>): string => {
  const of = (bundler: Bundler, example: Example) =>
    bundles.find((entry) => entry.bundle.bundler === bundler && entry.example === example)?.bundle
  return [
    "| bundler | `@accord/client` | `@accord/client/validated` |",
    "| --- | --- | --- |",
    ...BUNDLERS.map(
      (bundler) =>
        `| ${bundler} ${of(bundler, "default")?.version ?? ""} | ${cell(of(bundler, "default"))} | ${cell(of(bundler, "validated"))} |`
    )
  ].join("\n")
}

const SIZES_BEGIN =
  "<!-- bundle sizes: written by `npm run generate` (test/bundles.ts); test/bundle.test.ts fails while they differ -->"
const SIZES_END = "<!-- end of bundle sizes -->"

/** The client's README with `table` as its table of sizes ("Bundle size"). */
export const readmeWithSizes = (readme: string, table: string): string =>
  replaceBetween(readme, SIZES_BEGIN, SIZES_END, table)
