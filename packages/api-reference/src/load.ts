import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { brotliCompressSync, constants, gzipSync } from "node:zlib"
import type { DocsAssets, StaticAsset, StaticAssetEncodings } from "@accord/core"
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

/** Files smaller than this are sent as they are: the coding's header and the request's CPU outweigh a few saved bytes. */
export const MIN_COMPRESSED_SIZE = 1024

/**
 * Brotli's quality for the files, compressed once per process when they are loaded. Measured on swagger-ui's 1.7 MB
 * bundle (2-core machine): quality 5 gives 405 KB in 44 ms, 9 gives 392 KB in 0.12 s, 10 gives 365 KB in 1.0 s, 11 gives
 * 359 KB in 2.4 s. Every process (every worker, every start in a test) pays it, so 5: within 13% of the best, for
 * 2% of its start-up time.
 */
export const BROTLI_QUALITY = 5

/** gzip's level: 6 (zlib's default) gives the bundle 462 KB in 28 ms, 9 gives 460 KB in 36 ms. */
const GZIP_LEVEL = 6

/**
 * The body in `br` and `gzip` (`GZIP_LEVEL`), each kept only when it is smaller: empty for a file under
 * `MIN_COMPRESSED_SIZE`. The core picks one per request from `Accept-Encoding` (`StaticAsset.encodings`).
 */
export const compressedEncodings = (body: Uint8Array): StaticAssetEncodings => {
  if (body.byteLength < MIN_COMPRESSED_SIZE) return {}
  const br = brotliCompressSync(body, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.byteLength
    }
  })
  const gzip = gzipSync(body, { level: GZIP_LEVEL })
  return {
    ...(br.byteLength < body.byteLength ? { br: new Uint8Array(br) } : {}),
    ...(gzip.byteLength < body.byteLength ? { gzip: new Uint8Array(gzip) } : {})
  }
}

/** A file of the page, with its codings. */
const asset = (contentType: string, body: Uint8Array, cacheControl: string): StaticAsset => ({
  contentType,
  body,
  cacheControl,
  encodings: compressedEncodings(body)
})

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
 * installed swagger-ui-dist package (no CDN at run time). Read and compressed (`br`, `gzip`) once per process, about
 * a second of CPU; later calls return the same map.
 */
export const loadApiReference = (): DocsAssets => {
  if (cached !== undefined) return cached
  const packageJson = createRequire(import.meta.url).resolve("swagger-ui-dist/package.json")
  const root = dirname(packageJson)
  cached = new Map<string, StaticAsset>([
    [
      "index.html",
      asset("text/html; charset=utf-8", utf8.encode(apiReferencePage(versionOf(packageJson))), REVALIDATE)
    ],
    ["init.js", asset("text/javascript; charset=utf-8", utf8.encode(API_REFERENCE_INIT_SCRIPT), REVALIDATE)],
    ["favicon.svg", asset("image/svg+xml", utf8.encode(API_REFERENCE_FAVICON), REVALIDATE)],
    ...Object.entries(SWAGGER_UI_FILES).map(([name, contentType]): [string, StaticAsset] => [
      name,
      asset(contentType, readFileSync(join(root, name)), IMMUTABLE)
    ])
  ])
  return cached
}
