import { loadApiReference } from "@accord/api-reference"
import { describe, expect, it } from "@effect/vitest"
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { brotliDecompressSync, gunzipSync } from "node:zlib"

const swaggerUiDist = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"))
const text = (bytes: Uint8Array | undefined): string => new TextDecoder().decode(bytes)

const version = (JSON.parse(readFileSync(join(swaggerUiDist, "package.json"), "utf8")) as { version: string }).version

// The page as served before, with the favicon and swagger-ui's files versioned (their URLs change with a release).
const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Accord API reference</title>
<link rel="icon" type="image/svg+xml" href="docs/favicon.svg">
<link rel="stylesheet" href="docs/swagger-ui.css?v=${version}">
</head>
<body>
<div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js?v=${version}"></script>
<script src="docs/init.js"></script>
</body>
</html>
`
const INIT_SCRIPT = `window.ui = SwaggerUIBundle({ url: "openapi.json", dom_id: "#swagger-ui", deepLinking: true, validatorUrl: null });\n`

describe("loadApiReference", () => {
  const docs = loadApiReference()

  it("holds the page, its init script, its icon and swagger-ui's two files, with their media types", () => {
    expect([...docs].map(([name, asset]) => [name, asset.contentType])).toEqual([
      ["index.html", "text/html; charset=utf-8"],
      ["init.js", "text/javascript; charset=utf-8"],
      ["favicon.svg", "image/svg+xml"],
      ["swagger-ui.css", "text/css; charset=utf-8"],
      ["swagger-ui-bundle.js", "text/javascript; charset=utf-8"]
    ])
    for (const [name, asset] of docs) expect(asset.body, name).toBeInstanceOf(Uint8Array)
  })

  it("serves the page and the init script byte for byte", () => {
    expect(text(docs.get("index.html")?.body)).toBe(PAGE)
    expect(text(docs.get("init.js")?.body)).toBe(INIT_SCRIPT)
  })

  it("the icon is an SVG document", () => {
    expect(text(docs.get("favicon.svg")?.body)).toMatch(/^<svg xmlns="http:\/\/www\.w3\.org\/2000\/svg"[^]*<\/svg>\n$/)
  })

  // docs/api.md, "Headers on every response": versioned URLs are immutable, the others are asked for again each time.
  it("swagger-ui's files, whose URLs carry its version, are cached for a year; the other files are revalidated", () => {
    expect([...docs].map(([name, asset]) => [name, asset.cacheControl])).toEqual([
      ["index.html", "no-cache"],
      ["init.js", "no-cache"],
      ["favicon.svg", "no-cache"],
      ["swagger-ui.css", "public, max-age=31536000, immutable"],
      ["swagger-ui-bundle.js", "public, max-age=31536000, immutable"]
    ])
    const page = text(docs.get("index.html")?.body)
    for (const [name, asset] of docs) {
      const versioned = page.includes(`docs/${name}?v=${encodeURIComponent(version)}"`)
      expect(versioned, name).toBe(asset.cacheControl?.includes("immutable") === true)
    }
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
    expect(references).toHaveLength(4)
    for (const reference of references) {
      const target = new URL(reference, "http://accord.test/api/docs")
      expect(target.origin, reference).toBe("http://accord.test")
      expect(target.pathname.startsWith("/api/docs/"), reference).toBe(true)
      expect(docs.has(target.pathname.slice("/api/docs/".length)), reference).toBe(true)
    }
  })

  // docs/api.md, "The docs page's files": compressed once here, picked per request by the core.
  it("swagger-ui's files carry br and gzip bodies that decode to the file; files under 1 KiB carry none", () => {
    const sizes: Record<string, ReadonlyArray<number>> = {}
    for (const [name, asset] of docs) {
      const { br, gzip } = asset.encodings ?? {}
      expect(asset.encodings, name).toBeDefined()
      if (asset.body.byteLength < 1024) {
        expect(asset.encodings, name).toEqual({})
        continue
      }
      if (br === undefined || gzip === undefined) throw new Error(`${name}: no br or gzip body`)
      expect(Buffer.compare(brotliDecompressSync(br), Buffer.from(asset.body)), `${name} br`).toBe(0)
      expect(Buffer.compare(gunzipSync(gzip), Buffer.from(asset.body)), `${name} gzip`).toBe(0)
      expect(br.byteLength, name).toBeLessThan(gzip.byteLength)
      sizes[name] = [asset.body.byteLength, gzip.byteLength, br.byteLength]
    }
    expect(Object.keys(sizes)).toEqual(["swagger-ui.css", "swagger-ui-bundle.js"])
    // The bundle, 1.7 MB as installed, goes out at about a quarter of that or less.
    const [identity = 0, , brotli = 0] = sizes["swagger-ui-bundle.js"] ?? []
    expect(brotli).toBeLessThan(identity / 4)
  })

  it("reads the files once per process", () => {
    expect(loadApiReference()).toBe(docs)
  })
})
