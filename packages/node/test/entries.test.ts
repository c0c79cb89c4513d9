import { readFileSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import * as union from "@accord/node"
import * as bridge from "@accord/node/bridge"
import * as scrypt from "@accord/node/scrypt"
import * as server from "@accord/node/server"
import * as stopSignals from "@accord/node/stop-signals"
import * as tokenDigest from "@accord/node/token-digest"

// One entry point per role (README.md): each loads what its role needs and nothing of the others, so a store that
// digests tokens loads no HTTP server and a Worker's bundle that hashes passwords no node:http.

const roles = { bridge, server, scrypt, "token-digest": tokenDigest, "stop-signals": stopSignals } as const

const source = (relative: string) => new URL(`../src/${relative}`, import.meta.url)

/** What a module loads when it runs: its value and bare imports (`import type` loads nothing), its own modules followed. */
const loadedBy = (
  entry: URL
): { readonly modules: ReadonlyArray<string>; readonly packages: ReadonlyArray<string> } => {
  const modules = new Set<string>()
  const packages = new Set<string>()
  const visit = (file: URL): void => {
    if (modules.has(file.pathname)) return
    modules.add(file.pathname)
    const text = readFileSync(file, "utf8")
    for (const [, specifier = ""] of text.matchAll(
      /^(?:import|export) (?!type )(?:[\w$*{},\s]*? from )?"([^"]+)"$/gm
    )) {
      if (specifier.startsWith(".")) visit(new URL(specifier.replace(/\.js$/, ".ts"), file))
      else packages.add(specifier)
    }
  }
  visit(entry)
  const root = source("").pathname
  return { modules: [...modules].map((path) => path.slice(root.length)).sort(), packages: [...packages].sort() }
}

describe("@accord/node's entry points", () => {
  it("token-digest loads node:crypto alone (what the stores import)", () => {
    expect(loadedBy(source("token-digest.ts"))).toEqual({ modules: ["token-digest.ts"], packages: ["node:crypto"] })
  })

  it("scrypt loads node:crypto, effect and the domain's port: no HTTP", () => {
    expect(loadedBy(source("scrypt-hasher.ts"))).toEqual({
      modules: ["scrypt-hasher.ts"],
      packages: ["@accord/domain", "effect", "node:crypto"]
    })
  })

  it("bridge loads the core and its own modules, none of the server's", () => {
    expect(loadedBy(source("bridge/index.ts"))).toEqual({
      modules: ["bridge/body-reader.ts", "bridge/bridge.ts", "bridge/index.ts"],
      packages: ["@accord/core"]
    })
  })

  it("server loads node:http and the bridge's request helpers, never the scrypt hasher or the digests", () => {
    const { modules, packages } = loadedBy(source("server/index.ts"))
    expect(modules.filter((module) => !module.startsWith("server/") && !module.startsWith("bridge/"))).toEqual([])
    expect(packages).toContain("node:http")
  })

  it("stop-signals loads nothing: a host that uses its framework's own server takes the rule alone", () => {
    expect(loadedBy(source("stop-signals.ts"))).toEqual({ modules: ["stop-signals.ts"], packages: [] })
  })

  it("the root is the union of the five, each name in one role only, the same values", () => {
    const names = Object.values(roles).flatMap((entry) => Object.keys(entry))
    expect(new Set(names).size).toBe(names.length)
    expect(Object.keys(union).sort()).toEqual([...names].sort())
    for (const [role, entry] of Object.entries(roles))
      for (const [name, value] of Object.entries(entry))
        expect(union[name as keyof typeof union], `${role}: ${name}`).toBe(value)
  })
})
