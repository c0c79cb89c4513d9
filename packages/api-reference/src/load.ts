import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type { DocsAssets, StaticAsset } from "@accord/core"
import { API_REFERENCE_INIT_SCRIPT, API_REFERENCE_PAGE, SWAGGER_UI_FILES } from "./page.js"

let cached: DocsAssets | undefined

const utf8 = new TextEncoder()

/**
 * Every file of the API reference, for the `docs` option of `makeHttpHandler` and the adapters: `index.html` (the
 * page, served at `{prefix}/docs`), `init.js`, and swagger-ui's stylesheet and bundle, read from the installed
 * swagger-ui-dist package (no CDN at run time). Read once per process; later calls return the same map.
 */
export const loadApiReference = (): DocsAssets => {
  if (cached !== undefined) return cached
  const root = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"))
  cached = new Map<string, StaticAsset>([
    ["index.html", { contentType: "text/html; charset=utf-8", body: utf8.encode(API_REFERENCE_PAGE) }],
    ["init.js", { contentType: "text/javascript; charset=utf-8", body: utf8.encode(API_REFERENCE_INIT_SCRIPT) }],
    ...Object.entries(SWAGGER_UI_FILES).map(([name, contentType]): [string, StaticAsset] => [
      name,
      { contentType, body: readFileSync(join(root, name)) }
    ])
  ])
  return cached
}
