import { startFastifyServer } from "@accord/adapter-fastify"
import { aliasRoutes, makeOpenApiDocument, operations, type SuccessSpec } from "@accord/contract"
import type { RunningServer } from "@accord/node/server"
import { type AccordTestKit, makeAccordTestKit } from "@accord/testkit"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import { execFile } from "node:child_process"
import { readFileSync } from "node:fs"
import { cp, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import ts from "typescript"
import type { GeneratedClientCalls, Target } from "../src/target.js"

// The clients users generate from Accord's OpenAPI document with the generators they already run, as the README tells
// them to: each generated offline from the document the server serves, compiled with tsc (strict), then every
// operation of the contract and two refusals called through it against a real server (issue 40).

const exampleDir = fileURLToPath(new URL("../", import.meta.url))
const repoRoot = join(exampleDir, "../..")
const readme = readFileSync(join(exampleDir, "README.md"), "utf8")

interface Generator {
  readonly name: string
  /** The package bin of its README line in "Generate" (`npx <bin> ...`). */
  readonly bin: string
  /** Its README line in "Compile" (`npx tsc -p <tsconfig>`). */
  readonly tsconfig: string
  /** The compiled calls module (src/<name>.ts under the tsconfig's outDir) and the factory it exports. */
  readonly module: string
  readonly calls: string
}

const GENERATORS: ReadonlyArray<Generator> = [
  {
    name: "openapi-typescript + openapi-fetch",
    bin: "openapi-typescript",
    tsconfig: "tsconfig.openapi-fetch.json",
    module: "dist/openapi-fetch/src/openapi-fetch.js",
    calls: "openapiFetchCalls"
  },
  {
    name: "@hey-api/openapi-ts",
    bin: "openapi-ts",
    tsconfig: "tsconfig.hey-api.json",
    module: "dist/hey-api/src/hey-api.js",
    calls: "heyApiCalls"
  },
  {
    name: "orval",
    bin: "orval",
    tsconfig: "tsconfig.orval.json",
    module: "dist/orval/src/orval.js",
    calls: "orvalCalls"
  }
]

/** The `npx` lines of the README's sh block under `## heading`, each as its words without `npx`. */
const readmeCommands = (heading: string): ReadonlyArray<ReadonlyArray<string>> => {
  const block = new RegExp(`\\n## ${heading}\\n[\\s\\S]*?\`\`\`sh\\n([\\s\\S]*?)\`\`\``).exec(readme)?.[1]
  if (block === undefined) throw new Error(`README.md has no sh block under "## ${heading}"`)
  return block
    .split("\n")
    .filter((line) => line.startsWith("npx "))
    .map((line) => line.slice("npx ".length).split(" "))
}
const generateCommands = readmeCommands("Generate")
const compileCommands = readmeCommands("Compile")
const commandOf = (commands: ReadonlyArray<ReadonlyArray<string>>, word: string): ReadonlyArray<string> => {
  const command = commands.find((words) => words.includes(word))
  if (command === undefined) throw new Error(`README.md has no npx line with ${word}`)
  return command
}

interface Ran {
  readonly code: number
  readonly output: string
}

/** Runs a package's bin (node_modules/.bin/<bin>) with this Node in `cwd`; never rejects. */
const runBin = async (
  cwd: string,
  [bin = "", ...args]: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv = process.env
): Promise<Ran> => {
  const script = await realpath(join(cwd, "node_modules/.bin", bin))
  return new Promise((resolve) =>
    execFile(
      process.execPath,
      [script, ...args],
      { cwd, env: { ...env, NO_COLOR: "1", FORCE_COLOR: "0" }, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, output: stdout + stderr })
    )
  )
}

/** What test/offline.mjs prints for each connection or name lookup it refused. */
const REFUSED = "accord-offline: refused"
/** Each generator runs with test/offline.mjs preloaded (children included): any network use is refused and printed. */
const offline: NodeJS.ProcessEnv = {
  ...process.env,
  NODE_OPTIONS: `--import=${pathToFileURL(join(exampleDir, "test/offline.mjs")).href}`
}

interface Outcome {
  readonly generated: Ran
  readonly compiled: Ran
}

let kit: AccordTestKit
let server: RunningServer
let copy = ""
let served: unknown
const outcomes = new Map<string, Outcome>()

beforeAll(async () => {
  kit = await makeAccordTestKit()
  server = await startFastifyServer({ runtime: kit.runtime, host: "127.0.0.1", port: 0 })
  // The workspace as a user has it, in a directory of its own: nothing is generated into the repository.
  copy = await mkdtemp(join(tmpdir(), "accord-openapi-generators-"))
  await cp(exampleDir, copy, {
    recursive: true,
    filter: (source) => !/[/\\](node_modules|dist|generated|test)$/.test(source) && !source.endsWith("openapi.json")
  })
  await symlink(join(repoRoot, "node_modules"), join(copy, "node_modules"), "dir")
  // The README's first step, `curl -o openapi.json <server>/api/openapi.json`.
  const text = await (await fetch(`${server.url}/api/openapi.json`)).text()
  served = JSON.parse(text)
  await writeFile(join(copy, "openapi.json"), text)
  await Promise.all(
    GENERATORS.map(async (generator) => {
      const generated = await runBin(copy, commandOf(generateCommands, generator.bin), offline)
      const compiled =
        generated.code === 0
          ? await runBin(copy, commandOf(compileCommands, generator.tsconfig))
          : { code: -1, output: "not generated" }
      outcomes.set(generator.name, { generated, compiled })
    })
  )
}, 600_000)

afterAll(async () => {
  await server?.close()
  await kit?.dispose()
  if (copy !== "") await rm(copy, { recursive: true, force: true })
})

const outcomeOf = (generator: Generator): Outcome => {
  const outcome = outcomes.get(generator.name)
  if (outcome === undefined) throw new Error(`${generator.name} did not run`)
  return outcome
}

describe("the example", () => {
  it("generates from the document the server serves, which is the contract's", () => {
    expect(served).toEqual(makeOpenApiDocument({ serverUrl: "/api" }))
    expect(readme).toContain("curl -o openapi.json http://127.0.0.1:3000/api/openapi.json")
  })

  it("has one README line per generator to generate and one to compile, and no other", () => {
    expect(generateCommands.map(([bin]) => bin)).toEqual(GENERATORS.map((generator) => generator.bin))
    expect(compileCommands).toEqual(GENERATORS.map((generator) => ["tsc", "-p", generator.tsconfig]))
  })

  it("refuses and reports a connection in a process that preloads test/offline.mjs (the guard works)", async () => {
    const script = join(copy, "probe-network.mjs")
    // A port fetch allows (9, say, is one of its "bad ports", refused before any connection); nothing listens there.
    await writeFile(script, 'await fetch("http://127.0.0.1:65535/").catch(() => undefined)\n')
    const ran = await new Promise<string>((resolve) =>
      execFile(process.execPath, [script], { env: offline }, (_error, stdout, stderr) => resolve(stdout + stderr))
    )
    expect(ran).toContain(`${REFUSED} a connection`)
  })
})

const operationIds = Object.keys(operations) as ReadonlyArray<keyof typeof operations>

describe.each(GENERATORS)("$name", (generator) => {
  let calls: GeneratedClientCalls | undefined
  const callsOf = async (): Promise<GeneratedClientCalls> => {
    if (calls !== undefined) return calls
    const { compiled } = outcomeOf(generator)
    if (compiled.code !== 0) throw new Error(`${generator.name}: not compiled\n${compiled.output}`)
    const module: Record<string, unknown> = await import(pathToFileURL(join(copy, generator.module)).href)
    const make = module[generator.calls]
    if (typeof make !== "function") throw new Error(`${generator.module} exports no ${generator.calls}`)
    const target: Target = {
      baseUrl: `${server.url}/api`,
      userToken: kit.user.token,
      clientToken: kit.client.token,
      paymentMethodId: kit.paymentMethods[0]?.id ?? ""
    }
    calls = (make as (target: Target) => GeneratedClientCalls)(target)
    return calls
  }

  it("generates offline from the local document", () => {
    const { generated } = outcomeOf(generator)
    expect(generated.output).not.toContain(REFUSED)
    expect(generated.code, generated.output).toBe(0)
  })

  it("compiles with tsc --strict, its calls included (tsconfig.base.json)", () => {
    const { compiled } = outcomeOf(generator)
    expect(compiled.output).toBe("")
    expect(compiled.code).toBe(0)
  })

  it("has a call for every operation of the contract and each deprecated alias, and for no other", async () => {
    expect(Object.keys((await callsOf()).operations).sort()).toEqual(
      [...operationIds, ...aliasRoutes.map((alias) => alias.id)].sort()
    )
  })

  // docs/api.md, "Versioning": a generated client may still call a deprecated alias; it answers as its operation.
  it.each(aliasRoutes)("$id: the deprecated alias answers as its operation", async (alias) => {
    const call = (await callsOf()).operations[alias.id]
    if (call === undefined) throw new Error(`${generator.name}: no call for ${alias.id} in src/`)
    const { status, body } = await call()
    const { success } = alias.operation as { readonly success: SuccessSpec<Schema.Top> }
    expect(status, JSON.stringify(body)).toBe(success.status)
    if (success.schema === undefined) return expect([undefined, null, ""]).toContain(body)
    const decoded = Schema.decodeUnknownExit(success.schema as Schema.Codec<unknown>)(body)
    expect(Exit.isSuccess(decoded), String(decoded)).toBe(true)
  })

  it.each(operationIds)("%s: its success status, with a body the contract's Schema decodes", async (operationId) => {
    const call = (await callsOf()).operations[operationId]
    if (call === undefined) throw new Error(`${generator.name}: no call for ${operationId} in src/`)
    const { status, body } = await call()
    const { success } = operations[operationId] as { readonly success: SuccessSpec<Schema.Top> }
    expect(status, JSON.stringify(body)).toBe(success.status)
    // A 204 has no body (each client gives none, or an empty one); any other success, one its Schema decodes.
    if (success.schema === undefined) return expect([undefined, null, ""]).toContain(body)
    const decoded = Schema.decodeUnknownExit(success.schema as Schema.Codec<unknown>)(body)
    expect(Exit.isSuccess(decoded), String(decoded)).toBe(true)
  })

  it("reads a 404's problem code through its types: not_found", async () => {
    expect(await (await callsOf()).notFound()).toEqual({ status: 404, code: "not_found", fields: [] })
  })

  it("reads a 400's problem code and field issues through its types: validation_failed", async () => {
    expect(await (await callsOf()).invalidBody()).toEqual({
      status: 400,
      code: "validation_failed",
      fields: ["/password too_short"]
    })
  })
})

describe("@hey-api/openapi-ts under exactOptionalPropertyTypes", () => {
  it("fails only in the fetch client it bundles, never in what it derives from the document", async () => {
    const { generated } = outcomeOf(GENERATORS[1] as Generator)
    expect(generated.code).toBe(0)
    const ran = await runBin(copy, [
      "tsc",
      "-p",
      "tsconfig.hey-api.json",
      "--noEmit",
      "--exactOptionalPropertyTypes",
      "true"
    ])
    const files = [...ran.output.matchAll(/^(\S+?)\(\d+,\d+\): error/gm)].map((match) => match[1] ?? "")
    // When a hey-api release compiles under it, this fails: then drop the exception in tsconfig.hey-api.json.
    expect(files.length, "hey-api's client now compiles with exactOptionalPropertyTypes").toBeGreaterThan(0)
    expect(files.filter((file) => !/^generated\/hey-api\/(client|core)\//.test(file))).toEqual([])
    // A whole tsc run of the generated client: minutes on a busy machine, and no figure of the test.
  }, 600_000)
})

/** The type openapi-typescript gives listEvents' `limit` query parameter, as tsc prints it. */
const limitType = (): string => {
  const probe = join(copy, "limit-probe.ts")
  ts.sys.writeFile(
    probe,
    'import type { operations } from "./generated/openapi-typescript/schema.js"\n' +
      'export type Limit = NonNullable<NonNullable<operations["listEvents"]["parameters"]["query"]>["limit"]>\n'
  )
  const program = ts.createProgram([probe], {
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: [],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext
  })
  const source = program.getSourceFile(probe)
  const alias = source?.statements.find(ts.isTypeAliasDeclaration)
  if (alias === undefined) throw new Error("the probe declares no type")
  const checker = program.getTypeChecker()
  return checker.typeToString(checker.getTypeAtLocation(alias.name))
}

describe("openapi-typescript", () => {
  // A query integer is declared as an integer with its bounds (issue 35 item 10), so a generated client types it so.
  it("types listEvents' limit as a number", () => {
    expect(limitType()).toBe("number")
  })
})
