import { existsSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { parseConfig } from "../src/config.js"
import { repoRoot } from "./cli-helpers.js"
import { binJs, installedCommands, pinnedNode, serverCommands } from "./run-commands.js"

/**
 * The root README's commands as a newcomer pastes them: every `npm start -- ...` line must start a server the "Try
 * it" curl lines reach, so each line's host and port (its flags over the defaults) are the curl lines' origin.
 */

const readme = readFileSync(join(repoRoot, "README.md"), "utf8")

/** The lines of the README's `sh` blocks, a line ending in `\` joined with the next, comments dropped. */
const shellLines = [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)]
  .flatMap((block) => (block[1] ?? "").replace(/\\\n\s*/g, "").split("\n"))
  .map((line) => line.replace(/\s+#.*$/, "").trim())

const startLines = shellLines.filter((line) => line.startsWith("npm start -- "))
const curlOrigins = new Set(
  shellLines.filter((line) => line.startsWith("curl ")).map((line) => /https?:\/\/[^/\s]+/.exec(line)?.[0])
)

describe("the README's commands", () => {
  it("the curl lines all call one origin", () => {
    expect(curlOrigins.size).toBe(1)
    expect([...curlOrigins][0]).toBe("http://127.0.0.1:3000")
  })

  it.each(startLines)("`%s` serves where the curl lines call", (line) => {
    const parsed = parseConfig(line.slice("npm start -- ".length).split(/\s+/), {})
    expect(parsed._tag).toBe("Run")
    if (parsed._tag !== "Run") return
    expect(`http://${parsed.config.host}:${parsed.config.port}`).toBe([...curlOrigins][0])
  })

  it("has the lines the test reads (the Try it line and the other adapters)", () => {
    expect(startLines).toContain("npm start -- --seed seed.json")
    expect(startLines.filter((line) => line.includes("--adapter")).length).toBeGreaterThanOrEqual(3)
  })
})

/**
 * Every command the docs print to run the server or a host passes SIGTERM and SIGINT on to it: each is of a kind a
 * test runs with both signals by every route (signal-routes.test.ts, packed-install.test.ts, the docs' and examples'
 * own tests). A command npm or npx runs through a shell without `exec` (`npx accord`, `"start": "node host.ts"`)
 * is of no kind: the shell would keep the signal from the server (README, "Deploying").
 */

/** The kinds, each with what runs it: a row of the signal matrix (its printed form) or a test file. */
const runCommandKinds: ReadonlyArray<{ readonly shape: RegExp; readonly runBy: string }> = [
  { shape: /^npm start( -- .*)?$/, runBy: "npm start -- ARGS" },
  { shape: /^npm start --silent( -- .*)?$/, runBy: "npm start --silent -- ARGS" },
  {
    shape: /^npx -y -p node@[\d.]+ -- exec node \S+\.(m?js|m?ts)( .*)?$/,
    runBy: `npx -y -p node@${pinnedNode} -- exec node ${binJs} ARGS`
  },
  // The server or a host run by node itself, or the bin (a `#!/usr/bin/env node` script, so node again).
  { shape: /^node \S+\.(js|ts|mjs)( .*)?$/, runBy: `node ${binJs} ARGS` },
  { shape: /^((\.\/)?node_modules\/\.bin\/)?accord( --.*)?$/, runBy: `node ${binJs} ARGS` },
  { shape: /^CMD \["node", "[^"]+\.js"(, "[^"]*")*\]$/, runBy: `node ${binJs} ARGS` },
  { shape: /^npx -c 'exec [^']+'$/, runBy: "npx -c 'exec accord ARGS'" },
  { shape: /^"start": "exec [^"]+"$/, runBy: '"start": "exec accord ARGS", then npm start' },
  { shape: /^exec node packages\/server\/bin\/accord\.js( .*)?$/, runBy: "docs/examples/test/server-cli.test.ts" },
  { shape: /^npm start -w @accord\/example-(koa|fastify)-host$/, runBy: "docs/examples/test/example-hosts.test.ts" },
  {
    shape: /^(\.\.\/)*node_modules\/\.bin\/(bun src\/bun\.ts|deno run [-=\w ]+ src\/deno\.ts)$/,
    runBy: "examples/fetch-runtimes/test/runtimes.test.ts"
  }
]

/** What may run a server: npm's start, npx, node on a file, a bin, a start script, a container command. */
const startsSomething =
  /\bnpm (run )?start\b|\bnpx\b|\bnode \S+\.(js|ts|mjs)\b|"start":|\bCMD \[|node_modules\/\.bin\/|^accord --/
/** Commands that run once and exit, which no signal needs to reach. */
const oneShot =
  /^npx$|^npx (vitest|tsc|changeset|accord-migrate|accord-conformance|openapi-typescript|openapi-ts|orval)\b|^npx -y -p node@[\d.]+ -- (npm (ci|install)\b|exec$)/

/** A command line as the shell runs it, one command of an `&&` list: variables set before it and a final `&` dropped. */
const commandsOf = (line: string): ReadonlyArray<string> =>
  line.split("&&").map((part) =>
    part
      .trim()
      .replace(/^(\w+=("[^"]*"|'[^']*'|\S+)\s+)+/, "")
      .replace(/\s*&$/, "")
  )

const docFiles = [
  "README.md",
  ...readdirSync(join(repoRoot, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
  ...["packages", "examples"].flatMap((dir) =>
    readdirSync(join(repoRoot, dir))
      .map((name) => `${dir}/${name}/README.md`)
      .filter((path) => existsSync(join(repoRoot, path)))
  )
]

/** Every command a doc prints: the lines of its `sh` blocks (`\` continuations joined) and its inline code. */
const printedCommands = docFiles.flatMap((file) => {
  const text = readFileSync(join(repoRoot, file), "utf8")
  const blockLines = [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].flatMap((block) =>
    (block[1] ?? "")
      .replace(/\\\n\s*/g, "")
      .split("\n")
      .map((line) => line.replace(/\s+#.*$/, "").trim())
  )
  // A span opens and closes with the same run of backticks (``a`b`` holds a backtick).
  const inline = [...text.replace(/^```\w*\n[\s\S]*?^```$/gm, "").matchAll(/(`+)([^`][\s\S]*?)\1(?!`)/g)].map((span) =>
    (span[2] ?? "").replace(/\s+/g, " ").trim()
  )
  return [...blockLines, ...inline]
    .flatMap(commandsOf)
    .filter((command) => startsSomething.test(command) && !oneShot.test(command))
    .map((command) => ({ file, command }))
})

const kindOf = (command: string) => runCommandKinds.find((kind) => kind.shape.test(command))

describe("every run command the docs print passes signals on to what it runs", () => {
  it("finds the commands this suite knows are printed", () => {
    const commands = printedCommands.map(({ command }) => command)
    expect(commands).toEqual(
      expect.arrayContaining([
        "npm start",
        "npm start --silent -- ...",
        "node packages/server/bin/accord.js --host 0.0.0.0 --port 8080 --store postgres",
        "node packages/server/dist/main.js ...",
        `npx -y -p node@${pinnedNode} -- exec node packages/server/bin/accord.js ...`,
        "npx -c 'exec accord ...'",
        '"start": "exec accord ..."',
        "npm start -w @accord/example-koa-host"
      ])
    )
  })

  it.each(printedCommands.map(({ file, command }) => [command, file]))("`%s` (%s)", (command) => {
    const kind = kindOf(command)
    expect(kind, "a command of no kind the signal tests run").toBeDefined()
  })

  it("each kind is run by a row of the signal matrix or a test file that exists", () => {
    const rows = [...serverCommands, ...installedCommands(() => "", {})].map((command) => command.printed)
    for (const { runBy } of runCommandKinds)
      expect(rows.includes(runBy) || existsSync(join(repoRoot, runBy)), runBy).toBe(true)
  })

  it("refuses the commands that leave a shell between npm and the server", () => {
    for (const command of [
      "npx accord --port 8080",
      `npx -y -p node@${pinnedNode} -- node packages/server/bin/accord.js ...`,
      "npx node host.ts",
      '"start": "node host.ts"',
      '"start": "tsc -b && node dist/main.js"'
    ])
      expect(kindOf(command), command).toBeUndefined()
  })

  it("every package's start script execs what it starts (npm forwards its signals to the script's shell)", () => {
    const manifests = ["package.json", ...docFiles.filter((file) => file !== "README.md" && !file.startsWith("docs/"))]
      .map((file) => file.replace(/README\.md$/, "package.json"))
      .filter((file) => existsSync(join(repoRoot, file)))
    const starts = manifests.flatMap((file) => {
      const scripts = (JSON.parse(readFileSync(join(repoRoot, file), "utf8")) as { scripts?: Record<string, string> })
        .scripts
      return scripts?.["start"] === undefined ? [] : [[file, scripts["start"]] as const]
    })
    expect(starts.map(([file]) => file)).toEqual(
      expect.arrayContaining(["package.json", "examples/koa-host/package.json", "examples/fastify-host/package.json"])
    )
    for (const [file, start] of starts) expect(start, file).toMatch(/(^|&& )exec \S/)
  })
})
