import { lstatSync, readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { repoRoot } from "./cli-helpers.js"

/**
 * What the README's "Deploying" recipe leaves on a production host: the packages of package-lock.json that its
 * `npm prune` keeps. The server's dependencies, and no test runner, bundler, benchmark or other runtime.
 */

interface LockedPackage {
  readonly dev?: boolean
  readonly optional?: boolean
  readonly devOptional?: boolean
  readonly link?: boolean
}

const lock = JSON.parse(readFileSync(join(repoRoot, "package-lock.json"), "utf8")) as {
  readonly packages: Readonly<Record<string, LockedPackage>>
}

const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
const deploying = readme.slice(readme.indexOf("## Deploying"), readme.indexOf("\n## ", readme.indexOf("## Deploying")))
const pruneLine = /npm prune [^#\n]*/.exec(deploying)?.[0].trim() ?? ""
const omitted = new Set([...pruneLine.matchAll(/--omit[= ](\w+)/g)].map((match) => match[1]))

/**
 * npm's own rule (arborist's `Node.shouldOmit`): a package goes when it is only for development, only optional, or
 * only in their overlap (`devOptional`: a dev tool that a production package names as an optional peer) and both
 * are omitted.
 */
const pruned = (entry: LockedPackage): boolean =>
  (entry.dev === true && omitted.has("dev")) ||
  (entry.optional === true && omitted.has("optional")) ||
  (entry.devOptional === true && omitted.has("dev") && omitted.has("optional"))

const kept = Object.entries(lock.packages).filter(([path, entry]) => path.startsWith("node_modules/") && !pruned(entry))

/** A package's name from its lockfile path: the part after the last `node_modules/`. */
const nameOf = (path: string): string => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length)

/** Bytes of the files under `dir`, its own `node_modules` (other packages, counted as themselves) left out. */
const bytesUnder = (dir: string): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((sum, entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return entry.name === "node_modules" ? sum : sum + bytesUnder(path)
    return sum + lstatSync(path).size
  }, 0)

/** Not for a production server: test runners and their bundler, the load generator, other JavaScript runtimes. */
const devOnly = (name: string): boolean =>
  ["vitest", "vite", "rolldown", "autocannon", "miniflare", "bun", "deno", "workerd", "fast-check"].includes(name) ||
  name.startsWith("@vitest/") ||
  name.startsWith("@rolldown/")

describe("the README's production install (Deploying)", () => {
  it("prunes with a command npm runs, omitting the dev dependencies", () => {
    expect(pruneLine).toMatch(/^npm prune( --omit=\w+)+$/)
    expect(omitted.has("dev")).toBe(true)
  })

  it("keeps no test runner, bundler, load generator or other runtime", () => {
    const names = kept.map(([path]) => nameOf(path))
    expect(names.filter(devOnly)).toEqual([])
    // What it keeps is the server's: its own dependencies are all there.
    const server = JSON.parse(readFileSync(join(repoRoot, "packages/server/package.json"), "utf8")) as {
      readonly dependencies: Readonly<Record<string, string>>
    }
    expect(names).toEqual(expect.arrayContaining(Object.keys(server.dependencies)))
  })

  it("states the installed size of what it keeps", () => {
    // The workspace links point at the repository's own packages; the others are installed here by `npm ci`.
    const installed = kept.filter(
      ([path, entry]) => entry.link !== true && lstatSync(join(repoRoot, path), { throwIfNoEntry: false }) !== undefined
    )
    const megabytes = installed.reduce((sum, [path]) => sum + bytesUnder(join(repoRoot, path)), 0) / 1e6
    console.log(
      `\`${pruneLine}\` keeps ${kept.length} packages of package-lock.json; ${installed.length} installed here, ` +
        `${megabytes.toFixed(0)} MB of files`
    )
    expect(installed.length).toBeGreaterThan(0)
  })
})
