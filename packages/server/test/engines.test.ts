import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { repoRoot } from "./cli-helpers.js"

/** The committed entry points that check the Node.js version before importing anything. */
const bins = [
  { name: "accord", pkg: "packages/server", file: "packages/server/bin/accord.js" },
  { name: "accord-migrate", pkg: "packages/store-postgres", file: "packages/store-postgres/bin/accord-migrate.js" }
] as const

const engineOf = (pkg: string): string => {
  const manifest = JSON.parse(readFileSync(join(repoRoot, pkg, "package.json"), "utf8")) as {
    engines: { node: string }
  }
  return manifest.engines.node
}

/** A Node.js older than the engines on this machine (the system's own, say), to show the refusal on. */
const olderNode = ((): { path: string; version: string } | undefined => {
  for (const path of ["/usr/bin/node", "/usr/local/bin/node", "/bin/node"]) {
    try {
      const version = execFileSync(path, ["--version"], { encoding: "utf8" }).trim()
      const [major = 0, minor = 0] = version.slice(1).split(".").map(Number)
      if (major < 22 || (major === 22 && minor < 19)) return { path, version }
    } catch {
      // Not there: try the next.
    }
  }
  return undefined
})()

describe("the bins' Node.js check", () => {
  it.each(bins)("$name checks the version its package.json's engines names", ({ pkg, file }) => {
    expect(engineOf(pkg)).toBe(">=22.19")
    expect(readFileSync(join(repoRoot, file), "utf8")).toContain("major < 22 || (major === 22 && minor < 19)")
  })

  it.each(bins)("$name starts on this Node.js ($name --help exits 0)", ({ file }) => {
    const run = spawnSync(process.execPath, [join(repoRoot, file), "--help"], { encoding: "utf8" })
    expect(run.status).toBe(0)
  })

  describe.skipIf(olderNode === undefined)(
    olderNode === undefined
      ? "on an older Node.js (skipped: no Node.js older than 22.19 on this machine to try)"
      : `on an older Node.js (${olderNode.version})`,
    () => {
      it.each(bins)("$name refuses with one line on stderr and exit 2", ({ name, file }) => {
        const run = spawnSync(olderNode?.path ?? "", [join(repoRoot, file), "--help"], { encoding: "utf8" })
        expect(run.status).toBe(2)
        expect(run.stdout).toBe("")
        expect(run.stderr).toBe(`${name}: Node.js 22.19 or newer is required; this is ${olderNode?.version}\n`)
      })
    }
  )
})

describe("the README's install on the pinned Node.js", () => {
  it("names the Node.js the root package.json pins, the one the npm scripts run on", () => {
    const manifest = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
      devDependencies: { node: string }
    }
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
    const named = /`npx -y -p node@(\S+) -- npm ci`/.exec(readme)?.[1]
    expect(named).toBe(manifest.devDependencies.node)
  })
})
