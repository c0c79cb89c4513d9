import { readFileSync } from "node:fs"

// docs/contributing.md as its tests read it: the page, and its tables of files by kind of change.

export const repoRoot = new URL("../../../", import.meta.url)

export const walkThrough = readFileSync(new URL("docs/contributing.md", repoRoot), "utf8")

/** One row of a kind's table: the file (`<name>` for any one path segment) and how a contributor learns of it. */
export interface GuideRow {
  readonly file: string
  /** `compile error`, `this page`, or `coverage test <path of the test>`. */
  readonly how: string
}

export interface GuideKind {
  readonly name: string
  readonly rows: ReadonlyArray<GuideRow>
}

/** Each table between `<!-- kind: name -->` and `<!-- end kind -->`, in the page's order. */
export const guideKinds: ReadonlyArray<GuideKind> = [
  ...walkThrough.matchAll(/^<!-- kind: ([\w-]+) -->\n([\s\S]*?)^<!-- end kind -->$/gm)
].map(([, name = "", table = ""]) => ({
  name,
  rows: table
    .split("\n")
    .slice(2)
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const cells = line.split(" | ")
      return { file: (cells[0] ?? "").replace(/^\| `|`$/g, ""), how: (cells.at(-1) ?? "").replace(/ \|$|`/g, "") }
    })
}))

/** A table's file as a pattern: `<name>` is any one path segment. */
export const filePattern = (file: string): RegExp =>
  new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&").replace(/<[\w-]+>/g, "[^/]+")}$`)
