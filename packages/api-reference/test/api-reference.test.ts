import { loadApiReference } from "@accord/api-reference"
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

const swaggerUiDist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"))
const text = (bytes: Uint8Array | undefined): string => new TextDecoder().decode(bytes)

// The bytes Accord served before the page moved out of core, kept exactly.
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Accord API reference</title>
<link rel="stylesheet" href="docs/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/init.js"></script>
</body>
</html>
`
const INIT_SCRIPT = `window.ui = SwaggerUIBundle({ url: "openapi.json", dom_id: "#swagger-ui", deepLinking: true });\n`

describe("loadApiReference", () => {
  const docs = loadApiReference()

  it("holds the page, its init script and swagger-ui's two files, with their media types", () => {
    expect([...docs].map(([name, asset]) => [name, asset.contentType])).toEqual([
      ["index.html", "text/html; charset=utf-8"],
      ["init.js", "text/javascript; charset=utf-8"],
      ["swagger-ui.css", "text/css; charset=utf-8"],
      ["swagger-ui-bundle.js", "text/javascript; charset=utf-8"]
    ])
    for (const [name, asset] of docs) expect(asset.body, name).toBeInstanceOf(Uint8Array)
  })

  it("serves the page and the init script byte for byte as before", () => {
    expect(text(docs.get("index.html")?.body)).toBe(PAGE)
    expect(text(docs.get("init.js")?.body)).toBe(INIT_SCRIPT)
  })

  it("serves swagger-ui-dist's files as installed, byte for byte", () => {
    for (const name of ["swagger-ui.css", "swagger-ui-bundle.js"]) {
      const body = docs.get(name)?.body
      expect(body?.byteLength, name).toBeGreaterThan(1000)
      expect(Buffer.compare(Buffer.from(body ?? []), readFileSync(join(swaggerUiDist, name))), name).toBe(0)
    }
  })

  it("every file the page loads is in the map (relative to {prefix}/docs), none from another origin", () => {
    const page = text(docs.get("index.html")?.body)
    const references = [...page.matchAll(/(?:href|src)="([^"]*)"/g)].map(([, reference = ""]) => reference)
    expect(references).toHaveLength(3)
    for (const reference of references) {
      const target = new URL(reference, "http://accord.test/api/docs")
      expect(target.origin, reference).toBe("http://accord.test")
      expect(target.pathname.startsWith("/api/docs/"), reference).toBe(true)
      expect(docs.has(target.pathname.slice("/api/docs/".length)), reference).toBe(true)
    }
  })

  it("reads the files once per process", () => {
    expect(loadApiReference()).toBe(docs)
  })
})
