import { equal, excludes, greaterThan, includes, includesAll, isTrue, matches, notEqual } from "./assert.js"
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
  VERSIONED_CACHE_CONTROL
} from "./responses.js"

// docs/api.md, "Routes", "Probes", "OpenAPI document": health, the probes, openapi.json and the docs page.

/** `src` of any element and `href` of anything but links (`<a>`): what a browser loads to render the page. */
const assetReferences = (html: string): ReadonlyArray<string> => {
  const references: Array<string> = []
  for (const tag of html.matchAll(/<([a-zA-Z][a-zA-Z0-9-]*)(\s[^>]*)?>/g)) {
    const tagName = (tag[1] ?? "").toLowerCase()
    for (const attribute of (tag[2] ?? "").matchAll(/\s(src|href)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi)) {
      if ((attribute[1] ?? "").toLowerCase() === "href" && tagName === "a") continue
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
const docsBase = (t: AuditTarget): URL => new URL(t.paths.docs, t.url)

const OK_BODY = '{"status":"ok"}'

export const serviceAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-health-ok",
    level: "MUST",
    title: 'GET health is 200 {"status":"ok"} without credentials',
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

      const operations: ReadonlyArray<{
        path: string
        method: string
        success: string
        errors: ReadonlyArray<string>
        credentialed: boolean
      }> = [
        {
          path: "/plans/v1/subscription-plans/public/",
          method: "post",
          success: "201",
          errors: ["400", "401", "413", "415"],
          credentialed: true
        },
        {
          path: "/users/v1/preferences/language/",
          method: "put",
          success: "200",
          errors: ["400", "401", "403", "413", "415"],
          credentialed: true
        },
        {
          path: "/users/v1/preferences/language/",
          method: "get",
          success: "200",
          errors: ["401", "403"],
          credentialed: true
        },
        {
          path: "/payments/v1/payment-methods/{id}/",
          method: "put",
          success: "200",
          errors: ["400", "401", "403", "404", "413", "415"],
          credentialed: true
        },
        {
          path: "/payments/v1/payment-methods/",
          method: "get",
          success: "200",
          errors: ["401", "403"],
          credentialed: true
        },
        { path: "/health", method: "get", success: "200", errors: ["503"], credentialed: false },
        { path: "/health/live", method: "get", success: "200", errors: [], credentialed: false },
        { path: "/health/ready", method: "get", success: "200", errors: ["503"], credentialed: false }
      ]
      for (const operation of operations) {
        const label = `${operation.method.toUpperCase()} ${operation.path}`
        const pathItem = record(`${label}: path item`, resolveRef(document, documentPaths[operation.path]))
        const op = record(`${label}: operation`, pathItem[operation.method])
        const responses = record(`${label}: responses`, op["responses"])
        includesAll(Object.keys(responses), [operation.success, ...operation.errors], `${label}: statuses`)
        // Liveness never depends on the store, so it is never documented as 503.
        if (operation.errors.length === 0) excludes(Object.keys(responses), "503", `${label}: statuses`)
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
  })
]
