import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { DOCS_ASSET_FILES } from "../http/docs-page.js"
import type { DocsAssets, StaticAsset } from "../http/types.js"

let cached: DocsAssets | undefined

/** Reads the API reference UI's files from the installed swagger-ui-dist package once (no CDN at run time). */
export const loadDocsAssets = (): DocsAssets => {
  if (cached !== undefined) return cached
  const root = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"))
  cached = new Map(
    Object.entries(DOCS_ASSET_FILES).map(([name, contentType]): [string, StaticAsset] => [
      name,
      { contentType, body: readFileSync(join(root, name)) }
    ])
  )
  return cached
}
