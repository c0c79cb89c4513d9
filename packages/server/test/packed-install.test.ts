import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { execFileSync, spawn } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { delimiter, dirname, join } from "node:path"
import { stripVTControlCharacters } from "node:util"
import { repoRoot, testSeed } from "./cli-helpers.js"
import {
  drainsOnSignal,
  installedCommands,
  killStartedGroups,
  shellParentMessage,
  signalMatrix,
  spawnNpx
} from "./run-commands.js"

/**
 * What a project outside this repository gets, by the commands docs/embedding.md prints under "Installing": every
 * public package packed in the clone, the tarballs installed into a project outside the workspace (no workspace
 * link, no dev dependency), then the `accord` bin, a host as the guide prints it, and the client's README example,
 * run there.
 */

interface Manifest {
  readonly name: string
  readonly version: string
  readonly private?: boolean
  readonly dependencies?: Readonly<Record<string, string>>
}

const manifests = readdirSync(join(repoRoot, "packages")).map(
  (dir) => JSON.parse(readFileSync(join(repoRoot, "packages", dir, "package.json"), "utf8")) as Manifest
)
const publicPackages = manifests.filter((manifest) => manifest.private !== true).map((manifest) => manifest.name)

/** npm, the same one that runs this test; with the Node.js that runs it first on the PATH (bins say `env node`). */
const env = {
  ...process.env,
  PATH: `${dirname(process.execPath)}${delimiter}${process.env["PATH"] ?? ""}`,
  npm_config_audit: "false",
  npm_config_fund: "false",
  npm_config_loglevel: "error",
  // npm's default, whatever this machine's user config says: the guide's own flags must pin effect.
  npm_config_save_exact: "false"
}

/** The guide's "Installing" section: its `sh` blocks, in order (in the clone, then in your project). */
const guide = readFileSync(join(repoRoot, "docs/embedding.md"), "utf8")
const installing = guide.slice(guide.indexOf("## Installing"), guide.indexOf("\n## ", guide.indexOf("## Installing")))
const [inTheClone = "", inYourProject = ""] = [...installing.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map(
  (block) => block[1] ?? ""
)

/** The guide's destination folder, beside the clone; the test's is in its scratch directory. */
const GUIDE_DESTINATION = "../accord-packages"

/** A block of the guide as printed, with only its destination folder moved, in `cwd`; stops at the first failure. */
const runBlock = (block: string, cwd: string, destination: string): void => {
  expect(block, "the guide's block names the destination folder").toContain(GUIDE_DESTINATION)
  execFileSync("sh", ["-e", "-c", block.replaceAll(GUIDE_DESTINATION, destination)], {
    cwd,
    env,
    encoding: "utf8",
    stdio: "pipe"
  })
}

let scratch = ""

beforeAll(() => {
  // The clone after `npm ci`: installed, and built (the build, again, in case a source changed since).
  execFileSync(process.execPath, [join(repoRoot, "node_modules/typescript/bin/tsc"), "-b"], { cwd: repoRoot })
  scratch = mkdtempSync(join(tmpdir(), "accord-installed-"))
  const tarballs = join(scratch, "accord-packages")
  runBlock(inTheClone, repoRoot, tarballs)
  const app = join(scratch, "app")
  mkdirSync(app)
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "accord-scratch", private: true, type: "module" }))
  runBlock(inYourProject, app, tarballs)
  copyFileSync(join(repoRoot, "seed.json"), join(app, "seed.json"))
  writeFileSync(join(app, "test-seed.json"), JSON.stringify(testSeed))
  // The start script README ("Deploying") prints for a project that installed the packages.
  const manifest = JSON.parse(readFileSync(join(app, "package.json"), "utf8")) as Record<string, unknown>
  writeFileSync(join(app, "package.json"), JSON.stringify({ ...manifest, scripts: { start: "exec accord" } }, null, 2))
}, 300_000)

afterAll(() => {
  killStartedGroups()
  if (scratch !== "") rmSync(scratch, { recursive: true, force: true })
})

const app = () => join(scratch, "app")

interface Running {
  /** The address from its stdout's first `listening on URL` line. */
  readonly listening: Promise<string>
  /** SIGTERM, then how it exited. */
  readonly stop: () => Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
}

/** A process in the scratch project that prints `listening on URL` once it serves. */
const spawnInApp = (command: string, args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}): Running => {
  const child = spawn(command, args, { cwd: app(), env: { ...env, ...extraEnv }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => void (stderr += chunk.toString("utf8")))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  const listening = new Promise<string>((resolve, reject) => {
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString("utf8")
      const found = /listening on (http:\/\/\S+)/.exec(stdout)
      if (found?.[1] !== undefined) resolve(found[1])
    })
    void exited.then(() => reject(new Error(`exited before listening: ${stderr}`)))
  })
  return {
    listening,
    stop: () => {
      child.kill("SIGTERM")
      return exited
    }
  }
}

describe(`the public packages (${publicPackages.length}) packed and installed outside the workspace`, () => {
  it("the guide's pack command makes a tarball for each public package, and none for a private one", () => {
    const tarball = (manifest: Manifest) =>
      `${manifest.name.replace("@", "").replace("/", "-")}-${manifest.version}.tgz`
    const expected = manifests.filter((manifest) => manifest.private !== true).map(tarball)
    expect(readdirSync(join(scratch, "accord-packages")).sort()).toEqual(expected.sort())
  })

  it("the guide's install pins effect at the packages' own version, exactly", () => {
    const host = JSON.parse(readFileSync(join(app(), "package.json"), "utf8")) as Manifest
    const pinned = new Set(manifests.flatMap((manifest) => manifest.dependencies?.["effect"] ?? []))
    expect([...pinned]).toEqual([host.dependencies?.["effect"]])
  })

  it("each installed package has its built files, types, README and LICENSE, and no test", () => {
    for (const name of publicPackages) {
      const dir = join(app(), "node_modules", name)
      const entries = readdirSync(dir)
      expect(entries, name).toEqual(expect.arrayContaining(["dist", "README.md", "LICENSE", "package.json"]))
      expect(entries, name).not.toContain("test")
      expect(
        readdirSync(join(dir, "dist")).some((file) => file.endsWith(".d.ts")),
        name
      ).toBe(true)
    }
  })

  it("the `accord` bin serves a seed: a PUT of the preferences is 200", async () => {
    const cli = spawnInApp(join(app(), "node_modules/.bin/accord"), ["--port", "0", "--seed", "seed.json"])
    const url = await cli.listening
    const answer = await fetch(`${url}/api/users/v1/preferences/language/`, {
      method: "PUT",
      headers: { authorization: "Bearer u1-demo-token-7f3c9a", "content-type": "application/json" },
      body: '{"language":"EN-us","timezone":60}'
    })
    expect(answer.status).toBe(200)
    expect(await answer.json()).toMatchObject({ language: "en-US", timezone: 60 })
    expect(await cli.stop()).toEqual({ code: 0, signal: null })
  })

  it("the Koa host of docs/embedding.md runs as printed: the host's route, and Accord's for its demo user", async () => {
    copyFileSync(join(repoRoot, "docs/examples/koa-mount.ts"), join(app(), "koa-mount.ts"))
    const host = spawnInApp(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        'const { server } = await import("./koa-mount.ts"); server.on("listening", () => console.log(`listening on http://127.0.0.1:${server.address().port}`)); process.on("SIGTERM", () => server.close())'
      ],
      { PORT: "0" }
    )
    const url = await host.listening
    expect(await (await fetch(`${url}/hello`)).json()).toEqual({ hello: "world" })
    // The guide's curl line: the snippet seeds u_1 with seed.json's demo token and two payment methods.
    const methods = await fetch(`${url}/api/payments/v1/payment-methods/`, {
      headers: { authorization: "Bearer u1-demo-token-7f3c9a" }
    })
    expect(methods.status).toBe(200)
    const listed = (await methods.json()) as { data: ReadonlyArray<{ id: string }> }
    expect(listed.data.map((method) => method.id)).toEqual(["pm_1", "pm_2"])
    expect((await host.stop()).code).toBe(0)
  })

  it("the guide's allowScripts leaves no install script of the tarballs undecided (npm 11's install-scripts)", () => {
    const host = JSON.parse(readFileSync(join(app(), "package.json"), "utf8")) as { allowScripts?: unknown }
    expect(host.allowScripts).toEqual({ node: true, "@scarf/scarf": false })
    const npmMajor = Number(execFileSync("npm", ["--version"], { cwd: app(), env, encoding: "utf8" }).split(".")[0])
    // npm 10 has no install-scripts command: it runs every script, and ignores the field.
    if (npmMajor >= 11)
      expect(execFileSync("npm", ["install-scripts", "ls"], { cwd: app(), env, encoding: "utf8" })).toContain(
        "No packages with unreviewed install scripts"
      )
  })

  it("the guide's host test runs as printed, on the test dependencies the guide installs", () => {
    const testing = guide.slice(
      guide.indexOf("## Testing a host"),
      guide.indexOf("\n## ", guide.indexOf("## Testing a host"))
    )
    const [dependencies = ""] = [...testing.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((block) => block[1] ?? "")
    execFileSync("sh", ["-e", "-c", dependencies], { cwd: app(), env, encoding: "utf8", stdio: "pipe" })
    // npm ls exits 1 on a peer dependency out of its range (a vitest @effect/vitest refuses).
    execFileSync("npm", ["ls", "vitest", "@effect/vitest"], { cwd: app(), env, encoding: "utf8" })
    copyFileSync(join(repoRoot, "docs/examples/host.test.ts"), join(app(), "host.test.ts"))
    const run = execFileSync("npx", ["vitest", "run", "host.test.ts"], { cwd: app(), env, encoding: "utf8" })
    expect(stripVTControlCharacters(run)).toMatch(/Tests\s+1 passed \(1\)/)
  }, 300_000)

  it("the client's README example runs as printed and prints what it says", () => {
    const readme = readFileSync(join(repoRoot, "packages/client/README.md"), "utf8")
    const example = /^```ts\n([\s\S]*?)^```$/m.exec(readme)?.[1] ?? ""
    writeFileSync(join(app(), "client-example.ts"), example)
    const printed = execFileSync(process.execPath, ["client-example.ts"], { cwd: app(), env, encoding: "utf8" })
    const promised = example
      .split("\n")
      .filter((line) => line.startsWith("// ") && /^\/\/ \d{3} |^\/\/ validation_failed/.test(line))
      .map((line) => line.slice(3))
    expect(promised.length).toBeGreaterThan(0)
    // console.log folds a long object over several lines when stdout is not a terminal: compare with spaces folded.
    const folded = (text: string) => text.replace(/\s+/g, " ").trim()
    expect(folded(printed)).toBe(folded(promised.join("\n")))
  })
})

describe.concurrent(
  "the installed `accord` as README prints it x every signal route: uploads in flight answered, exit 0",
  () => {
    it.for(signalMatrix(installedCommands(app, { PATH: env.PATH ?? "" })))(
      "`%s`: %s to %s",
      { timeout: 120_000 },
      ([, , , { command, route, signal }]) => drainsOnSignal(command, route, signal, join(app(), "test-seed.json"))
    )

    // npm runs `npx accord` in `sh -c`, and the shell stays between npm and the server: a signal to npx reaches the
    // shell, which dies without passing it on, and the server goes on running with nobody to stop it. Nothing in the
    // bin can make the shell forward, so it is not a printed command; the server says so when it is started that way.
    it("plain `npx accord` warns at start that a signal to npx will not reach it", async () => {
      const cli = spawnNpx(["accord", "--port", "0"], { PATH: env.PATH ?? "" }, { cwd: app(), detached: true })
      try {
        await cli.logged("listening")
        expect(cli.logLines().find((line) => line["msg"] === shellParentMessage)).toMatchObject({
          level: 40,
          parent: "sh",
          npmEvent: "npx"
        })
      } finally {
        if (cli.child.pid !== undefined) process.kill(-cli.child.pid, "SIGKILL")
      }
    }, 120_000)
  }
)
