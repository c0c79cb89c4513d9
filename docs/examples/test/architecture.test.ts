import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { describe, expect, it } from "@effect/vitest"

// docs/architecture.md stays true: the files, packages and names it gives exist, and its package graph is the
// packages' own dependencies, every one of them.

const repoRoot = new URL("../../../", import.meta.url)
const page = readFileSync(new URL("docs/architecture.md", repoRoot), "utf8")

/** The text of a `## heading` section of the page. */
const section = (heading: string): string => {
  const start = page.indexOf(`\n## ${heading}\n`)
  expect(start, `the page has a "${heading}" section`).toBeGreaterThan(-1)
  const end = page.indexOf("\n## ", start + 1)
  return page.slice(start, end === -1 ? undefined : end)
}

const REPO_PATH = /^(?:packages|docs|bench|examples|scripts)\/[\w./-]+$|^eslint\.config\.js$/
const IDENTIFIER = /^([A-Za-z_$][\w$]*)(?:\([\w, ]*\))?$/

/** What a text quotes in backticks: the repository paths, and the code names (`problem(code)` names `problem`). */
const quoted = (text: string) => {
  const spans = [...text.matchAll(/`([^`\n]+)`/g)].map(([, span = ""]) => span)
  return {
    paths: spans.filter((span) => REPO_PATH.test(span)),
    names: spans.flatMap((span) => IDENTIFIER.exec(span)?.slice(1, 2) ?? [])
  }
}

/** The TypeScript under a path: the file itself, or every .ts file below a directory. */
const sourcesUnder = (path: string): ReadonlyArray<string> => {
  const url = new URL(path, repoRoot)
  if (!statSync(url).isDirectory()) return [readFileSync(url, "utf8")]
  return readdirSync(url, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => readFileSync(new URL(file, url.href.endsWith("/") ? url : `${url.href}/`), "utf8"))
}

/** The names a piece of the page quotes that none of the files it names defines or uses. */
const namesMissingFrom = (text: string): ReadonlyArray<string> => {
  const { paths, names } = quoted(text)
  const sources = paths.flatMap(sourcesUnder).join("\n")
  return names.filter((name) => !new RegExp(`\\b${name.replace(/\$/g, "\\$")}\\b`).test(sources))
}

interface Workspace {
  readonly name: string
  readonly private: boolean
  /** Its Accord dependencies: run-time ones, and for a private package (never installed by users) its dev ones too. */
  readonly accordDependencies: ReadonlyArray<string>
  readonly exports: ReadonlyArray<string>
}

const workspaces: ReadonlyArray<Workspace> = readdirSync(new URL("packages/", repoRoot)).flatMap((dir) => {
  const manifest = new URL(`packages/${dir}/package.json`, repoRoot)
  if (!existsSync(manifest)) return []
  const json = JSON.parse(readFileSync(manifest, "utf8")) as {
    readonly name: string
    readonly private?: boolean
    readonly exports?: Readonly<Record<string, unknown>>
    readonly dependencies?: Readonly<Record<string, string>>
    readonly peerDependencies?: Readonly<Record<string, string>>
    readonly devDependencies?: Readonly<Record<string, string>>
  }
  const isPrivate = json.private === true
  const dependencies = {
    ...json.dependencies,
    ...json.peerDependencies,
    ...(isPrivate ? json.devDependencies : undefined)
  }
  return [
    {
      name: json.name,
      private: isPrivate,
      accordDependencies: Object.keys(dependencies).filter((name) => name.startsWith("@accord/")),
      exports: Object.keys(json.exports ?? { ".": "" })
    }
  ]
})
const workspaceNamed = new Map(workspaces.map((workspace) => [workspace.name, workspace]))

/** The mermaid graph: its nodes by id with their package names, and its arrows as package name pairs. */
const packageGraph = () => {
  const block = /```mermaid\n([\s\S]*?)```/.exec(section("The package graph"))?.[1] ?? ""
  const nodes = new Map(
    [...block.matchAll(/^\s*(\w+)\["(@accord\/[\w-]+)"\]$/gm)].map(([, id = "", name = ""]) => [id, name])
  )
  const nameOf = (id: string): string => nodes.get(id) ?? `<no node ${id}>`
  const arrows = [...block.matchAll(/^\s*([\w& ]+?)\s*-->\s*([\w& ]+?)\s*$/gm)].flatMap(([, from = "", to = ""]) =>
    from
      .split("&")
      .flatMap((source) => to.split("&").map((target) => [nameOf(source.trim()), nameOf(target.trim())] as const))
  )
  return { nodes: [...nodes.values()], arrows }
}

describe("docs/architecture.md", () => {
  it("names only files and directories that exist", () => {
    const { paths } = quoted(page)
    expect(paths.length).toBeGreaterThan(30)
    expect(paths.filter((path) => !existsSync(new URL(path, repoRoot)))).toEqual([])
  })

  it("names only packages and entry points that exist", () => {
    const named = [...new Set([...page.matchAll(/@accord\/[\w-]+(?:\/[\w-]+)?/g)].map(([specifier]) => specifier))]
    const missing = named.filter((specifier) => {
      const [scope, name, entry] = specifier.split("/")
      const workspace = workspaceNamed.get(`${scope}/${name}`)
      return workspace === undefined || !workspace.exports.includes(entry === undefined ? "." : `./${entry}`)
    })
    expect(missing).toEqual([])
  })

  it("each step of a request's way, and the way back, names what the files it gives hold", () => {
    const pieces = section("A request's way")
      .split(/\n\n|\n(?=\d+\. )/)
      .filter((piece) => piece.trim() !== "" && !piece.startsWith("\n## "))
    expect(pieces.filter((piece) => /^\d+\. /.test(piece)).length).toBe(10)
    for (const piece of pieces) {
      expect(quoted(piece).paths.length, piece).toBeGreaterThan(0)
      expect(namesMissingFrom(piece), piece).toEqual([])
    }
  })

  it("each concept of the table is in the files its row gives", () => {
    const rows = section("Where each concept lives")
      .split("\n")
      .filter((line) => line.startsWith("| ") && !line.startsWith("| concept"))
    expect(rows.length).toBeGreaterThan(20)
    for (const row of rows) {
      expect(quoted(row).paths.length, row).toBeGreaterThan(0)
      expect(namesMissingFrom(row), row).toEqual([])
    }
  })

  it("draws every package, each arrow a dependency its package.json declares", () => {
    const { nodes, arrows } = packageGraph()
    expect(nodes.filter((name) => !workspaceNamed.has(name))).toEqual([])
    expect(workspaces.map(({ name }) => name).filter((name) => !nodes.includes(name))).toEqual([])
    const undeclared = arrows.filter(([from, to]) => !workspaceNamed.get(from)?.accordDependencies.includes(to))
    expect(undeclared).toEqual([])
  })

  it("leaves out no Accord dependency of any package", () => {
    const { arrows } = packageGraph()
    const drawn = new Set(arrows.map(([from, to]) => `${from} --> ${to}`))
    const missing = workspaces.flatMap(({ name, accordDependencies }) =>
      accordDependencies.map((dependency) => `${name} --> ${dependency}`).filter((arrow) => !drawn.has(arrow))
    )
    expect(missing).toEqual([])
  })
})
