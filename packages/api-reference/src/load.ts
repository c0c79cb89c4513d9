import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import type { DocsAssets, StaticAsset } from "@accord/core"
import {
  API_REFERENCE_FAVICON,
  API_REFERENCE_INIT_SCRIPT,
  apiReferencePage,
  IMMUTABLE,
  REVALIDATE,
  SWAGGER_UI_FILES
} from "./page.js"

let cached: DocsAssets | undefined

const utf8 = new TextEncoder()

/** swagger-ui-dist's version, from its package.json: the `?v=` of its files' URLs in the page. */
const versionOf = (packageJson: string): string => {
  const parsed: unknown = JSON.parse(readFileSync(packageJson, "utf8"))
  const version = typeof parsed === "object" && parsed !== null && "version" in parsed ? parsed.version : undefined
  if (typeof version !== "string") throw new Error(`${packageJson} has no version`)
  return version
}

/**
 * Every file of the API reference, for the `docs` option of `makeHttpHandler` and the adapters: `index.html` (the
 * page, served at `{prefix}/docs`), `init.js`, `favicon.svg`, and swagger-ui's stylesheet and bundle, read from the
 * installed swagger-ui-dist package (no CDN at run time). Read once per process; later calls return the same map.
 */
export const loadApiReference = (): DocsAssets => {
  if (cached !== undefined) return cached
  const packageJson = createRequire(import.meta.url).resolve("swagger-ui-dist/package.json")
  const root = dirname(packageJson)
  cached = new Map<string, StaticAsset>([
    [
      "index.html",
      {
        contentType: "text/html; charset=utf-8",
        body: utf8.encode(apiReferencePage(versionOf(packageJson))),
        cacheControl: REVALIDATE
      }
    ],
    [
      "init.js",
      {
        contentType: "text/javascript; charset=utf-8",
        body: utf8.encode(API_REFERENCE_INIT_SCRIPT),
        cacheControl: REVALIDATE
      }
    ],
    [
      "favicon.svg",
      { contentType: "image/svg+xml", body: utf8.encode(API_REFERENCE_FAVICON), cacheControl: REVALIDATE }
    ],
    ...Object.entries(SWAGGER_UI_FILES).map(([name, contentType]): [string, StaticAsset] => [
      name,
      { contentType, body: readFileSync(join(root, name)), cacheControl: IMMUTABLE }
    ])
  ])
  return cached
}
