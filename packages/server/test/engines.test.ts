import { describe, expect, it } from "@effect/vitest"
import { execFileSync, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { MINIMUM_NODE } from "@accord/cli-options/node-version"
import { repoRoot } from "./cli-helpers.js"

/**
 * The entry points that check the Node.js version before loading anything: the committed bins, and the built server
 * a production host runs as `node packages/server/dist/main.js`. All call one check (@accord/cli-options/node-version).
 */
const entryPoints = [
  { name: "accord", pkg: "packages/server", file: "packages/server/bin/accord.js" },
  { name: "accord", pkg: "packages/server", file: "packages/server/dist/main.js" },
  { name: "accord-migrate", pkg: "packages/store-postgres", file: "packages/store-postgres/bin/accord-migrate.js" }
] as const

const engineOf = (pkg: string): string => {
  const manifest = JSON.parse(readFileSync(join(repoRoot, pkg, "package.json"), "utf8")) as {
    engines: { node: string }
  }
  return manifest.engines.node
}

const minimum = `${MINIMUM_NODE.major}.${MINIMUM_NODE.minor}`

/** A Node.js older than the engines on this machine (the system's own, say), to show the refusal on. */
const olderNode = ((): { path: string; version: string } | undefined => {
  const onPath = spawnSync("which", ["-a", "node"], { encoding: "utf8" }).stdout.split("\n")
  for (const path of [...onPath, "/usr/bin/node", "/usr/local/bin/node", "/bin/node"].filter(Boolean)) {
    try {
      const version = execFileSync(path, ["--version"], { encoding: "utf8" }).trim()
      const [major = 0, minor = 0] = version.slice(1).split(".").map(Number)
      if (major < MINIMUM_NODE.major || (major === MINIMUM_NODE.major && minor < MINIMUM_NODE.minor)) {
        return { path, version }
      }
    } catch {
      // Not there: try the next.
    }
  }
  return undefined
})()

describe("the entry points' Node.js check", () => {
  it.each(["packages/cli-options", "packages/server", "packages/store-postgres"])(
    "checks the version %s's package.json's engines names",
    (pkg) => {
      expect(engineOf(pkg)).toBe(`>=${minimum}`)
    }
  )

  it.each(entryPoints)("$file starts on this Node.js (--help exits 0)", ({ file }) => {
    const run = spawnSync(process.execPath, [join(repoRoot, file), "--help"], { encoding: "utf8" })
    expect(run.status).toBe(0)
  })

  describe.skipIf(olderNode === undefined)(
    olderNode === undefined
      ? `on an older Node.js (skipped: no Node.js older than ${minimum} on this machine to try)`
      : `on an older Node.js (${olderNode.version})`,
    () => {
      it.each(entryPoints)("$file refuses with one line on stderr and exit 2", ({ name, file }) => {
        const run = spawnSync(olderNode?.path ?? "", [join(repoRoot, file), "--help"], { encoding: "utf8" })
        expect(run.status).toBe(2)
        expect(run.stdout).toBe("")
        expect(run.stderr).toBe(`${name}: Node.js ${minimum} or newer is required; this is ${olderNode?.version}\n`)
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
    // Every exact version it names (the install, and the server's on a host whose Node is older, in "Deploying").
    const exact = [...readme.matchAll(/npx -y -p node@(\d+\.\d+\.\d+)/g)].map((match) => match[1])
    expect(exact.length).toBeGreaterThanOrEqual(2)
    expect(new Set(exact)).toEqual(new Set([manifest.devDependencies.node]))
  })
})
