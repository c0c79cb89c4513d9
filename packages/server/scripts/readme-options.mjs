// Writes the option list of packages/server/README.md from the option table (src/options.ts, built to dist).
// Run by `npm run readme:options`, which builds first.
import { readFileSync, writeFileSync } from "node:fs"
import { stdout } from "node:process"
import { URL } from "node:url"
import { readmeWithOptions } from "../dist/options.js"

const readmeUrl = new URL("../README.md", import.meta.url)
const readme = readFileSync(readmeUrl, "utf8")
const updated = readmeWithOptions(readme)
if (updated !== readme) writeFileSync(readmeUrl, updated)
stdout.write(`packages/server/README.md: options ${updated === readme ? "already current" : "rewritten"}\n`)
