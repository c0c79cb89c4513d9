import {
  aliasRoutes,
  DEPRECATION_HEADER_FORMAT,
  IMF_FIXDATE_FORMAT,
  readDeprecation,
  type DeprecationNotice
} from "@accord/contract"
import { toAliasPath } from "../paths.js"
import type { RawRequest, RawResponse } from "../raw-http.js"
import { equal, fail, includes, isTrue, matches } from "./assert.js"
import { audit, type Audit, type AuditTarget } from "./audit.js"
import {
  bearer,
  comparableHeaders,
  defaults,
  expectPaymentMethodList,
  expectProblem,
  jsonHeaders,
  listPaymentMethods,
  show,
  unknownId
} from "./responses.js"

// docs/api.md, "Versioning": a deprecated path (the spec's `/v1/payment-methods/{id}/`, an alias of
// setDefaultPaymentMethod) answers as its operation does, with RFC 9745 `Deprecation`, RFC 8594 `Sunset` and a
// `Link` to its successor; past its sunset, 410 `gone` naming the successor. The dates are the server's options, so
// the audits read them from the answers and judge them against each other, never against a fixed date.

/** The headers a deprecated answer adds, and those that differ between any two answers of a rate-limited credential. */
const ADDED: ReadonlySet<string> = new Set(["deprecation", "sunset", "link", "ratelimit"])

const headerOf =
  (res: RawResponse) =>
  (name: string): string | null =>
    res.headers[name.toLowerCase()] ?? null

/** The successor's path for `id` under the target's prefix: the operation's own path. */
const successorOf = (t: AuditTarget, id: string): string => t.paths.paymentMethod(id)

/** The alias of `path` (an operation path), or a failure: the contract declares one. */
const aliasOf = (t: AuditTarget, path: string): string =>
  toAliasPath(t.prefix, path) ?? fail(`${path} has no alias in the contract`)

/** An answer past the sunset: 410 `gone`, its detail naming the successor's path. */
const expectGone = (label: string, res: RawResponse, successor: string): void => {
  expectProblem(label, res, { code: "gone" })
  const detail = (JSON.parse(res.body.toString("utf8")) as { readonly detail?: unknown }).detail
  includes(String(detail), successor, `${label}: the detail names the successor`)
}

/** The deprecation headers of an answer, each in its RFC's format, Sunset not before Deprecation. */
const expectDeprecationHeaders = (label: string, res: RawResponse, successor: string): DeprecationNotice => {
  const deprecation = res.headers["deprecation"] ?? fail(`${show(label, res)}: no Deprecation header`)
  matches(deprecation, DEPRECATION_HEADER_FORMAT, `${label}: Deprecation is an sf-date (@<seconds>), RFC 9745`)
  const notice = readDeprecation(headerOf(res)) ?? fail(`${label}: Deprecation unread`)
  const sunset = res.headers["sunset"]
  if (sunset !== undefined) {
    matches(sunset, IMF_FIXDATE_FORMAT, `${label}: Sunset is an IMF-fixdate HTTP-date, RFC 8594`)
    const at = notice.sunsetAt?.getTime() ?? fail(`${label}: Sunset unread`)
    isTrue(
      at >= (notice.deprecatedAt?.getTime() ?? Number.POSITIVE_INFINITY),
      `${label}: Sunset (${sunset}) is not before Deprecation (${deprecation})`
    )
  }
  equal(notice.successor, successor, `${label}: Link rel="successor-version"`)
  return notice
}

/** The requests of the operation that change nothing, each answered the same on its path and on its alias. */
const neutralRequests = (t: AuditTarget, current: string): ReadonlyArray<readonly [string, RawRequest]> => {
  const user = bearer(t.userToken)
  const put = (id: string, headers: Readonly<Record<string, string>>, body?: string): RawRequest => ({
    method: "PUT",
    path: t.paths.paymentMethod(id),
    headers,
    ...(body !== undefined && { body })
  })
  const other = t.otherUserPaymentMethods[0] ?? ""
  return [
    ["PUT the current default again (200, nothing changes)", put(current, jsonHeaders(t.userToken), "{}")],
    ["PUT without a credential (401)", put(current, {})],
    ["PUT with an application's credential (403)", put(current, bearer(t.clientToken))],
    ["PUT an unknown id (404)", put(unknownId(t), user)],
    ["PUT another user's method (404)", put(other, user)],
    ["PUT is_default false (400)", put(current, jsonHeaders(t.userToken), '{"is_default":false}')],
    ["PUT a body that is not JSON (400)", put(current, jsonHeaders(t.userToken), "{")],
    ["PUT text/plain (415)", put(current, jsonHeaders(t.userToken, "text/plain"), "{}")],
    ["PUT with an If-Match that does not match (412)", put(current, { ...user, "If-Match": '"nope"' })]
  ]
}

/** The user's current default (seed.json's or the audits' own), or their first method when none is. */
const currentDefault = async (t: AuditTarget): Promise<string> => {
  const list = expectPaymentMethodList("GET list", await listPaymentMethods(t, t.userToken))
  return defaults(list)[0] ?? t.userPaymentMethods[0] ?? fail("the user has no payment method")
}

export const deprecationAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-deprecation-headers",
    level: "MUST",
    title:
      "a deprecated path's answers, successes and errors, carry Deprecation (@seconds), Sunset (an HTTP-date, not before it) and Link to the successor",
    operations: ["setDefaultPaymentMethod"],
    run: async (t) => {
      if (aliasRoutes.length === 0) return
      const current = await currentDefault(t)
      for (const [label, request] of neutralRequests(t, current)) {
        const res = await t.send({ ...request, path: aliasOf(t, request.path) })
        const successor = successorOf(t, decodeURIComponent(request.path.split("/").at(-2) ?? ""))
        if (res.status === 410) expectGone(`alias: ${label}`, res, successor)
        expectDeprecationHeaders(`alias: ${label}`, res, successor)
      }
      // The operation's own path is not deprecated: none of the headers.
      const own = await t.send(neutralRequests(t, current)[0]?.[1] ?? fail("no request"))
      equal(own.headers["deprecation"], undefined, "the operation's own path: Deprecation")
    }
  }),

  audit({
    id: "ACC-deprecation-alias-parity",
    level: "MUST",
    title:
      "a deprecated alias answers as its operation, byte for byte but the deprecation headers; past its sunset, 410 gone naming the successor",
    operations: ["setDefaultPaymentMethod"],
    run: async (t) => {
      if (aliasRoutes.length === 0) return
      const current = await currentDefault(t)
      for (const [label, request] of neutralRequests(t, current)) {
        const own = await t.send(request)
        const alias = await t.send({ ...request, path: aliasOf(t, request.path) })
        if (alias.status === 410) {
          expectGone(`alias: ${label}`, alias, request.path)
          continue
        }
        equal(alias.status, own.status, `${label}: the alias's status`)
        const kept = (res: RawResponse) =>
          Object.fromEntries(Object.entries(comparableHeaders(res.headers)).filter(([name]) => !ADDED.has(name)))
        equal(kept(alias), kept(own), `${label}: the alias's headers but Deprecation, Sunset and Link`)
        equal(alias.body.toString("base64"), own.body.toString("base64"), `${label}: the alias's body bytes`)
      }
    }
  }),

  audit({
    id: "ACC-deprecation-cors-exposed",
    level: "MUST",
    title: "with CORS on, a deprecated path's answers expose Deprecation, Sunset and Link to the page",
    needs: ["cors"],
    operations: ["setDefaultPaymentMethod"],
    run: async (t) => {
      if (aliasRoutes.length === 0) return
      const origin = t.corsOrigin ?? fail("no origin the server's CORS allows")
      const path = aliasOf(t, t.paths.paymentMethod(unknownId(t)))
      const res = await t.send({ method: "PUT", path, headers: { ...bearer(t.userToken), Origin: origin } })
      equal(res.headers["access-control-allow-origin"], origin, "PUT the alias with an allowed Origin: its CORS")
      const exposed = (res.headers["access-control-expose-headers"] ?? "").split(",").map((name) => name.trim())
      for (const name of ["Deprecation", "Sunset", "Link"])
        isTrue(
          exposed.some((listed) => listed.toLowerCase() === name.toLowerCase()),
          `PUT the alias: Access-Control-Expose-Headers lists ${name} (got ${exposed.join(", ")})`
        )
      isTrue(res.headers["deprecation"] !== undefined, `${show("PUT the alias", res)}: Deprecation`)
    }
  })
]
