import { errorStatusesOf, operations } from "@accord/contract"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { MAX_RESPONSE_BYTES, type RawResponse } from "../raw-http.js"
import {
  equal,
  excludes,
  fail,
  greaterThan,
  includes,
  includesAll,
  isTrue,
  lessThan,
  matches,
  notEqual
} from "./assert.js"
import { audit, type Audit, type AuditTarget } from "./audit.js"
import {
  bearer,
  docsCacheControl,
  expectCommonHeaders,
  expectJsonSuccess,
  expectStatus,
  isRecord,
  parseJson,
  record,
  str,
  text,
  UNVERSIONED_CACHE_CONTROL,
  variesOn,
  VERSIONED_CACHE_CONTROL
} from "./responses.js"

// docs/api.md, "Routes", "Probes", "OpenAPI document": health, the probes, openapi.json and the docs page.

/**
 * `src` of any element and `href` of anything but links (`<a>`): what a browser loads to render the page. Tags are
 * found by index, not by the pattern `<name(\s[^>]*)?>`, which rescans the rest of the page from every `<` that no `>`
 * follows (quadratic: a 16 KiB page of `<a ` held the event loop for a second, past any deadline; docs/SECURITY.md,
 * item 32). Each tag's attributes are scanned once.
 */
export const assetReferences = (html: string): ReadonlyArray<string> => {
  const references: Array<string> = []
  const tagName = /[a-zA-Z][a-zA-Z0-9-]*/y
  for (let open = html.indexOf("<"); open !== -1; open = html.indexOf("<", open + 1)) {
    tagName.lastIndex = open + 1
    const name = tagName.exec(html)?.[0]
    if (name === undefined) continue
    const afterName = open + 1 + name.length
    if (html[afterName] !== ">" && !/\s/.test(html[afterName] ?? "")) continue
    const close = html.indexOf(">", afterName)
    if (close === -1) break
    const attributes = html.slice(afterName, close)
    open = close
    for (const attribute of attributes.matchAll(/\s(src|href)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi)) {
      if ((attribute[1] ?? "").toLowerCase() === "href" && name.toLowerCase() === "a") continue
      const value = (attribute[2] ?? attribute[3] ?? attribute[4] ?? "").replaceAll("&amp;", "&").trim()
      if (value === "" || value.startsWith("#") || /^(data|blob|javascript|about|mailto):/i.test(value)) continue
      references.push(value)
    }
  }
  return references
}

/** Follows a local `$ref` (`#/components/...`) in the OpenAPI document. */
const resolveRef = (document: Record<string, unknown>, value: unknown): unknown => {
  let current = value
  for (let hops = 0; hops < 10 && isRecord(current) && typeof current["$ref"] === "string"; hops++) {
    const ref = current["$ref"]
    if (!ref.startsWith("#/")) throw new Error(`non-local $ref ${ref}`)
    let target: unknown = document
    for (const segment of ref.slice(2).split("/")) {
      const key = segment.replaceAll("~1", "/").replaceAll("~0", "~")
      target = isRecord(target) ? target[key] : undefined
    }
    current = target
  }
  return current
}

/** The docs page's URL, against which its asset references resolve. */
export const docsBase = (t: AuditTarget): URL => new URL(t.paths.docs, t.url)

const OK_BODY = '{"status":"ok"}'

const variesOnEncoding = (res: RawResponse): boolean => variesOn(res, "Accept-Encoding")

/**
 * The identity bytes of a body sent in `coding`; throws when they do not decode or decode to more than
 * `MAX_RESPONSE_BYTES` (a few bytes of br can decode to gigabytes; docs/SECURITY.md, item 31).
 */
const decoded = (label: string, coding: string, body: Buffer): Buffer => {
  try {
    if (coding === "br") return brotliDecompressSync(body, { maxOutputLength: MAX_RESPONSE_BYTES })
    if (coding === "gzip") return gunzipSync(body, { maxOutputLength: MAX_RESPONSE_BYTES })
  } catch (error) {
    fail(`${label}: the ${coding} body does not decode: ${error instanceof Error ? error.message : String(error)}`)
  }
  return fail(`${label}: Content-Encoding ${coding}, which was not asked for`)
}

/** The headers a cache and a client read from a docs file's answer, which HEAD and GET must share. */
const ENTITY_HEADERS = ["content-type", "content-encoding", "content-length", "etag", "vary", "cache-control"] as const

export const serviceAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-health-ok",
    level: "MUST",
    title: 'GET health is 200 {"status":"ok"} without credentials',
    operations: ["health"],
    run: async (t) => {
      const res = await t.send({ method: "GET", path: t.paths.health })
      expectJsonSuccess("GET health", res, 200)
      equal(text(res), OK_BODY, "GET health: body")
    }
  }),

  audit({
    id: "ACC-probes-ok",
    level: "MUST",
    title: 'GET health/live and health/ready are 200 {"status":"ok"} without credentials',
    operations: ["liveness", "readiness"],
    run: async (t) => {
      for (const path of [t.paths.live, t.paths.ready]) {
        const res = await t.send({ method: "GET", path })
        expectJsonSuccess(`GET ${path}`, res, 200)
        equal(text(res), OK_BODY, `GET ${path}: body`)
      }
    }
  }),

  audit({
    id: "ACC-health-ignores-credentials",
    level: "MUST",
    title: "health and the probes ignore credentials, valid or not, and the query string",
    operations: ["health", "liveness", "readiness"],
    run: async (t) => {
      const headerSets: ReadonlyArray<readonly [string, Record<string, string>]> = [
        ["a malformed token", { Authorization: "Bearer nope$nope" }],
        ["Basic", { Authorization: "Basic dXNlcjpwYXNz" }],
        ["an unknown token", { Authorization: `Bearer unknown-${t.run}` }],
        ["the client", bearer(t.clientToken)],
        ["the user", bearer(t.userToken)]
      ]
      for (const path of [t.paths.health, t.paths.live, t.paths.ready]) {
        for (const [who, headers] of headerSets) {
          const res = await t.send({ method: "GET", path, headers })
          expectJsonSuccess(`GET ${path} with ${who}`, res, 200)
          equal(text(res), OK_BODY, `GET ${path} with ${who}: body`)
        }
        const withQuery = await t.send({ method: "GET", path: `${path}?verbose=1` })
        expectJsonSuccess(`GET ${path}?verbose=1`, withQuery, 200)
        equal(text(withQuery), OK_BODY, `GET ${path}?verbose=1: body`)
      }
    }
  }),

  audit({
    id: "ACC-openapi-document",
    level: "MUST",
    title: "GET openapi.json is an OpenAPI 3.1 document whose servers are [{url: the mount prefix}]",
    run: async (t) => {
      const res = await t.send({ method: "GET", path: t.paths.openapi })
      const document = record("openapi.json", expectJsonSuccess("GET openapi.json", res, 200, false))
      isTrue(
        str("openapi", document["openapi"]).startsWith("3.1"),
        `openapi.json: openapi is ${String(document["openapi"])}, expected 3.1`
      )
      equal(document["servers"], [{ url: t.prefix }], "openapi.json: servers")
    }
  }),

  audit({
    id: "ACC-openapi-operations",
    level: "MUST",
    title: "the OpenAPI document describes every operation, its statuses, bearer security and problem errors",
    run: async (t) => {
      const document = record(
        "openapi.json",
        parseJson("openapi.json", await t.send({ method: "GET", path: t.paths.openapi }))
      )
      const documentPaths = record("paths", document["paths"])
      const components = isRecord(document["components"]) ? document["components"] : {}
      const schemes = isRecord(components["securitySchemes"]) ? components["securitySchemes"] : {}
      const bearerSchemes = Object.entries(schemes)
        .filter(([, scheme]) => {
          const resolved = resolveRef(document, scheme)
          return (
            isRecord(resolved) && resolved["type"] === "http" && String(resolved["scheme"]).toLowerCase() === "bearer"
          )
        })
        .map(([schemeName]) => schemeName)
      greaterThan(bearerSchemes.length, 0, "a bearer security scheme")

      // What the contract says of each operation: its route, its success, every error status its checks and declared
      // errors can answer (`errorStatusesOf`, which the document is made from), and whether it needs a credential.
      const documented = Object.values(operations).map((operation) => ({
        path: operation.path,
        method: operation.method.toLowerCase(),
        success: String(operation.success.status),
        errors: errorStatusesOf(operation).map(String),
        credentialed: operation.access !== "public"
      }))
      for (const operation of documented) {
        const label = `${operation.method.toUpperCase()} ${operation.path}`
        const pathItem = record(`${label}: path item`, resolveRef(document, documentPaths[operation.path]))
        const op = record(`${label}: operation`, pathItem[operation.method])
        const responses = record(`${label}: responses`, op["responses"])
        includesAll(Object.keys(responses), [operation.success, ...operation.errors], `${label}: statuses`)
        // An operation that never depends on the store (liveness) is never documented as 503.
        if (!operation.errors.includes("503")) excludes(Object.keys(responses), "503", `${label}: statuses`)
        for (const [status, response] of Object.entries(responses)) {
          if (!/^[45]/.test(status)) continue
          const content = record(
            `${label} ${status}: content`,
            record(`${label} ${status}`, resolveRef(document, response))["content"]
          )
          includes(Object.keys(content), "application/problem+json", `${label} ${status}: problem media type`)
        }
        const security = op["security"] ?? document["security"]
        if (operation.credentialed) {
          if (!Array.isArray(security)) throw new Error(`${label}: no security requirement`)
          const referenced = security.flatMap((requirement: unknown) =>
            isRecord(requirement) ? Object.keys(requirement) : []
          )
          isTrue(
            referenced.some((scheme) => bearerSchemes.includes(scheme)),
            `${label}: bearer security`
          )
        } else {
          isTrue(security === undefined || (Array.isArray(security) && security.length === 0), `${label}: no security`)
        }
      }
    }
  }),

  audit({
    id: "ACC-head-service-routes",
    level: "MUST",
    title: "HEAD answers like GET without a body on health, the probes and openapi.json",
    operations: ["health", "liveness", "readiness"],
    run: async (t) => {
      for (const path of [t.paths.health, t.paths.live, t.paths.ready, t.paths.openapi]) {
        const get = await t.send({ method: "GET", path })
        const head = await t.send({ method: "HEAD", path })
        expectStatus(`GET ${path}`, get, 200)
        equal(head.status, 200, `HEAD ${path}: status`)
        expectCommonHeaders(`HEAD ${path}`, head)
        equal(head.headers["content-type"], get.headers["content-type"], `HEAD ${path}: Content-Type`)
        equal(head.body.length, 0, `HEAD ${path}: no body`)
      }
    }
  }),

  // The API reference page is opt-in when embedding (docs/api.md, "Routes"): SHOULD, so that a host without it still
  // passes every MUST. The standalone server serves it.
  audit({
    id: "ACC-docs-page-local-assets",
    level: "SHOULD",
    title: "GET docs is an HTML page whose every asset is served locally (no CDN), HEAD like GET",
    run: async (t) => {
      const res = await t.send({ method: "GET", path: t.paths.docs })
      expectStatus("GET docs", res, 200)
      expectCommonHeaders("GET docs", res, UNVERSIONED_CACHE_CONTROL)
      matches(res.headers["content-type"] ?? "", /^text\/html(;|$)/, "docs Content-Type")
      const html = text(res)
      includes(html.toLowerCase(), "<html", "docs: an HTML page")
      const base = docsBase(t)
      const references = assetReferences(html)
      const external = references.filter((reference) => new URL(reference, base).origin !== base.origin)
      equal(external, [], "assets loaded from another origin")
      for (const reference of references) {
        const target = new URL(reference, base)
        const asset = await t.send({ method: "GET", path: `${target.pathname}${target.search}` })
        const label = `docs asset ${reference}`
        expectStatus(label, asset, 200)
        expectCommonHeaders(label, asset, docsCacheControl(target))
        notEqual(asset.headers["content-type"] ?? "", "", `${label}: Content-Type`)
        greaterThan(asset.body.length, 0, `${label}: not empty`)
      }
      const head = await t.send({ method: "HEAD", path: t.paths.docs })
      equal(head.status, 200, "HEAD docs: status")
      expectCommonHeaders("HEAD docs", head, UNVERSIONED_CACHE_CONTROL)
      equal(head.headers["content-type"], res.headers["content-type"], "HEAD docs: Content-Type")
      equal(head.body.length, 0, "HEAD docs: no body")
    }
  }),

  audit({
    id: "ACC-docs-cache-control",
    level: "SHOULD",
    title: "the docs page's versioned assets (?v=) are cacheable for a year; the page and openapi.json are not",
    run: async (t) => {
      const page = await t.send({ method: "GET", path: t.paths.docs })
      expectCommonHeaders("GET docs", page, UNVERSIONED_CACHE_CONTROL)
      const base = docsBase(t)
      const versioned = assetReferences(text(page))
        .map((reference) => new URL(reference, base))
        .filter((target) => target.searchParams.has("v"))
      greaterThan(versioned.length, 0, "the page links versioned assets")
      for (const target of versioned) {
        const path = `${target.pathname}${target.search}`
        for (const method of ["GET", "HEAD"]) {
          const asset = await t.send({ method, path })
          expectStatus(`${method} ${path}`, asset, 200)
          expectCommonHeaders(`${method} ${path}`, asset, VERSIONED_CACHE_CONTROL)
        }
      }
      expectCommonHeaders("GET openapi.json", await t.send({ method: "GET", path: t.paths.openapi }))
    }
  }),

  // docs/api.md, "The docs page's files": precompressed once, negotiated per request, passed through untouched by
  // the binding (no second compression, no Content-Encoding dropped, the Content-Length of the bytes sent).
  audit({
    id: "ACC-docs-content-encoding",
    level: "SHOULD",
    title:
      "the docs page's files are sent in br or gzip when accepted, decoding to the identity bytes, with Vary, an ETag per coding and a 304, HEAD like GET",
    needs: ["raw-http"],
    run: async (t) => {
      const page = await t.send({ method: "GET", path: t.paths.docs })
      expectStatus("GET docs", page, 200)
      const base = docsBase(t)
      const paths = [
        t.paths.docs,
        ...assetReferences(text(page)).map((reference) => {
          const target = new URL(reference, base)
          return `${target.pathname}${target.search}`
        })
      ]
      let largest = { path: "", size: 0 }
      for (const path of paths) {
        const identity = await t.send({ method: "GET", path })
        expectStatus(`GET ${path}`, identity, 200)
        equal(identity.headers["content-encoding"], undefined, `GET ${path} without Accept-Encoding: Content-Encoding`)
        isTrue(variesOnEncoding(identity), `GET ${path}: Vary lists Accept-Encoding (got ${identity.headers["vary"]})`)
        equal(identity.headers["content-length"], String(identity.body.length), `GET ${path}: Content-Length`)
        if (identity.body.length > largest.size) largest = { path, size: identity.body.length }
        for (const acceptEncoding of ["br", "gzip", "gzip, deflate, br"]) {
          const label = `GET ${path} with Accept-Encoding: ${acceptEncoding}`
          const res = await t.send({ method: "GET", path, headers: { "Accept-Encoding": acceptEncoding } })
          expectStatus(label, res, 200)
          isTrue(variesOnEncoding(res), `${label}: Vary lists Accept-Encoding`)
          equal(res.headers["content-length"], String(res.body.length), `${label}: Content-Length`)
          const coding = res.headers["content-encoding"]
          if (coding === undefined) {
            equal(res.body.equals(identity.body), true, `${label}: identity bytes`)
            continue
          }
          isTrue(acceptEncoding.includes(coding), `${label}: Content-Encoding ${coding} was asked for`)
          equal(decoded(label, coding, res.body).equals(identity.body), true, `${label}: decodes to the identity bytes`)
          const head = await t.send({ method: "HEAD", path, headers: { "Accept-Encoding": acceptEncoding } })
          equal(head.status, 200, `HEAD ${path} (${acceptEncoding}): status`)
          equal(head.body.length, 0, `HEAD ${path} (${acceptEncoding}): no body`)
          for (const name of ENTITY_HEADERS)
            equal(head.headers[name], res.headers[name], `HEAD ${path} (${acceptEncoding}): ${name} as GET's`)
        }
      }
      // The largest file (swagger-ui's bundle, 1.7 MB) is the one that must be compressed, in both codings.
      const path = largest.path
      const refused = await t.send({ method: "GET", path, headers: { "Accept-Encoding": "br;q=0, gzip;q=0" } })
      equal(refused.headers["content-encoding"], undefined, `GET ${path} with br;q=0, gzip;q=0: Content-Encoding`)
      const tags: Record<string, string> = {}
      for (const [acceptEncoding, coding] of [
        ["br", "br"],
        ["gzip", "gzip"],
        ["gzip, deflate, br", "br"],
        ["br;q=0, gzip", "gzip"]
      ] as const) {
        const label = `GET ${path} with Accept-Encoding: ${acceptEncoding}`
        const res = await t.send({ method: "GET", path, headers: { "Accept-Encoding": acceptEncoding } })
        equal(res.headers["content-encoding"], coding, `${label}: Content-Encoding`)
        lessThan(res.body.length, largest.size, `${label}: smaller than the identity body`)
        const etag = res.headers["etag"]
        if (etag === undefined) return fail(`${label}: no ETag`)
        tags[coding] = etag
        const notModified = await t.send({
          method: "GET",
          path,
          headers: { "Accept-Encoding": acceptEncoding, "If-None-Match": etag }
        })
        equal(notModified.status, 304, `${label} and If-None-Match its ETag: status`)
        equal(notModified.body.length, 0, `${label} and If-None-Match its ETag: no body`)
        equal(notModified.headers["etag"], etag, `${label} and If-None-Match its ETag: ETag`)
        isTrue(variesOnEncoding(notModified), `${label} and If-None-Match its ETag: Vary`)
      }
      const identityTag = refused.headers["etag"]
      equal(
        new Set([identityTag, tags["br"], tags["gzip"]]).size,
        3,
        `GET ${path}: one ETag per coding (identity ${identityTag}, br ${tags["br"]}, gzip ${tags["gzip"]})`
      )
      const stale = await t.send({
        method: "GET",
        path,
        headers: { "Accept-Encoding": "gzip", "If-None-Match": tags["br"] ?? "" }
      })
      equal(stale.status, 200, `GET ${path} in gzip with If-None-Match the br ETag: status`)
    }
  })
]
