import type { RawRequest, RawResponse } from "../raw-http.js"
import { parseWire } from "../raw-socket.js"
import { equal, fail, isTrue } from "./assert.js"
import { audit, type Audit, type AuditTarget } from "./audit.js"
import { bearer, expectStatus, variesOn } from "./responses.js"
import { assetReferences, docsBase } from "./service.js"

// docs/api.md, "CORS"; docs/SECURITY.md, items 37 and 38. Only for a server that does CORS: the runner names an origin
// it allows (`corsOrigin`), and each audit first checks that this origin is answered, so that none passes against a
// server without CORS.

/** The request's single allowed Origin is answered: the audits that follow would prove nothing otherwise. */
const expectAllowed = async (t: AuditTarget): Promise<string> => {
  const origin = t.corsOrigin ?? fail("no origin the server's CORS allows")
  const res = await t.send({ method: "GET", path: t.paths.health, headers: { Origin: origin } })
  equal(
    res.headers["access-control-allow-origin"],
    origin,
    `GET health with Origin: ${origin} (the origin given as allowed): Access-Control-Allow-Origin`
  )
  isTrue(variesOn(res, "Origin"), `GET health with Origin: ${origin}: Vary lists Origin (got ${res.headers["vary"]})`)
  return origin
}

/** An answer with no CORS header at all, which still varies on Origin (a cache must not give it to another origin). */
const expectRefused = (label: string, res: RawResponse): void => {
  const granted = Object.keys(res.headers).filter((name) => name.startsWith("access-control-"))
  equal(granted, [], `${label}: Access-Control-* headers`)
  isTrue(variesOn(res, "Origin"), `${label}: Vary lists Origin (got ${res.headers["vary"]})`)
}

/** A docs file cached for a year (`?v=`) when the server has the docs page, else undefined. */
const versionedDocsFile = async (t: AuditTarget): Promise<string | undefined> => {
  const page = await t.send({ method: "GET", path: t.paths.docs })
  if (page.status !== 200) return undefined
  const base = docsBase(t)
  const versioned = assetReferences(page.body.toString("utf8"))
    .map((reference) => new URL(reference, base))
    .find((target) => target.searchParams.has("v"))
  return versioned === undefined ? undefined : `${versioned.pathname}${versioned.search}`
}

/** A request with two Origin lines, for a socket of its own: every HTTP client merges them into one. */
const withTwoOrigins = (t: AuditTarget, head: string, origins: readonly [string, string], more = ""): string =>
  `${head} HTTP/1.1\r\nHost: ${new URL(t.url).host}\r\nOrigin: ${origins[0]}\r\nOrigin: ${origins[1]}\r\n` +
  `${more}Connection: close\r\n\r\n`

export const corsAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-cors-vary-origin",
    level: "MUST",
    title:
      "with CORS on, every answer varies on Origin, also without one: errors, OPTIONS, 304s and the docs files included",
    needs: ["cors"],
    run: async (t) => {
      await expectAllowed(t)
      const user = bearer(t.userToken)
      const preferences = await t.send({ method: "GET", path: t.paths.preferences, headers: user })
      expectStatus("GET preferences", preferences, 200)
      const etag = preferences.headers["etag"] ?? ""
      const cases: Array<readonly [label: string, request: RawRequest, status: number]> = [
        ["GET health", { method: "GET", path: t.paths.health }, 200],
        ["HEAD health", { method: "HEAD", path: t.paths.health }, 200],
        ["OPTIONS preferences", { method: "OPTIONS", path: t.paths.preferences }, 204],
        ["GET preferences", { method: "GET", path: t.paths.preferences, headers: user }, 200],
        [
          "GET preferences with If-None-Match its ETag",
          { method: "GET", path: t.paths.preferences, headers: { ...user, "If-None-Match": etag } },
          304
        ],
        ["GET preferences without credentials", { method: "GET", path: t.paths.preferences }, 401],
        ["GET an unknown path", { method: "GET", path: `${t.prefix}/unknown-${t.run}` }, 404],
        ["DELETE health", { method: "DELETE", path: t.paths.health }, 405]
      ]
      // The answers a shared cache keeps for a year (docs/api.md, "The docs page's files"): each coding, and a 304.
      const file = await versionedDocsFile(t)
      for (const acceptEncoding of file === undefined ? [] : ["identity", "br, gzip"]) {
        const path = file ?? ""
        const headers = { "Accept-Encoding": acceptEncoding }
        const tag = (await t.send({ method: "GET", path, headers })).headers["etag"] ?? ""
        cases.push(
          [`GET ${path} with Accept-Encoding: ${acceptEncoding}`, { method: "GET", path, headers }, 200],
          [
            `GET ${path} with Accept-Encoding: ${acceptEncoding} and If-None-Match its ETag`,
            { method: "GET", path, headers: { ...headers, "If-None-Match": tag } },
            304
          ]
        )
      }
      for (const [what, request, status] of cases) {
        const label = `${what}, without Origin`
        const res = await t.send(request)
        expectStatus(label, res, status)
        expectRefused(label, res)
        if (request.path === file)
          isTrue(variesOn(res, "Accept-Encoding"), `${label}: Vary lists Accept-Encoding (got ${res.headers["vary"]})`)
      }
    }
  }),

  audit({
    id: "ACC-cors-origin-not-one-origin",
    level: "MUST",
    title:
      "with CORS on, an Origin that is not one serialised origin (two joined by a comma, a path) gets no CORS headers, and varies on Origin",
    needs: ["cors"],
    run: async (t) => {
      const origin = await expectAllowed(t)
      const values = [
        `${origin}, ${origin}`,
        `${origin},https://other.example`,
        `https://other.example, ${origin}`,
        `null, ${origin}`,
        `${origin} ${origin}`,
        `${origin}/`,
        `${origin}/path`
      ]
      for (const value of values) {
        const label = `GET health with Origin: ${value}`
        const res = await t.send({ method: "GET", path: t.paths.health, headers: { Origin: value } })
        expectStatus(label, res, 200)
        expectRefused(label, res)
        const preflight = await t.send({
          method: "OPTIONS",
          path: t.paths.preferences,
          headers: { Origin: value, "Access-Control-Request-Method": "PUT" }
        })
        expectStatus(`preflight with Origin: ${value}`, preflight, 204)
        expectRefused(`preflight with Origin: ${value}`, preflight)
      }
    }
  }),

  audit({
    id: "ACC-cors-two-origin-headers",
    level: "MUST",
    title: "with CORS on, a request with two Origin headers gets no CORS headers, and varies on Origin",
    needs: ["wire", "cors"],
    run: async (t) => {
      const exchange = t.exchange ?? fail("no raw socket")
      const origin = await expectAllowed(t)
      const pairs = [
        ["the allowed origin twice", [origin, origin]],
        ["the allowed origin, then another", [origin, "https://other.example"]],
        ["null, then the allowed origin", ["null", origin]]
      ] as const
      const requests = [
        [`GET ${t.paths.health}`, "", 200],
        [`OPTIONS ${t.paths.preferences}`, "Access-Control-Request-Method: PUT\r\n", 204]
      ] as const
      for (const [which, origins] of pairs) {
        for (const [head, more, status] of requests) {
          const label = `${head} with two Origin headers (${which})`
          const { wire } = await exchange(withTwoOrigins(t, head, origins, more))
          const res =
            parseWire(wire) ?? fail(`${label}: not an HTTP/1.1 response: ${JSON.stringify(wire.slice(0, 200))}`)
          expectStatus(label, res, status)
          expectRefused(label, res)
        }
      }
    }
  })
]
