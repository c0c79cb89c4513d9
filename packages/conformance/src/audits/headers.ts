import { allowOnPathOf, REQUEST_ID_PATTERN } from "../paths.js"
import type { RawRequest } from "../raw-http.js"
import { equal, matches, notEqual } from "./assert.js"
import { audit, type Audit, type AuditTarget } from "./audit.js"
import { bearer, comparableHeaders, expectCommonHeaders, expectStatus, jsonHeaders } from "./responses.js"

// docs/api.md, "Headers on every response".

/** One request of each kind of answer: successes, every error status a black box can provoke, OPTIONS, HEAD. */
const kinds = (t: AuditTarget): ReadonlyArray<[string, RawRequest]> => [
  ["200 health", { method: "GET", path: t.paths.health }],
  ["200 preferences", { method: "GET", path: t.paths.preferences, headers: bearer(t.userToken) }],
  ["200 openapi", { method: "GET", path: t.paths.openapi }],
  ["400", { method: "PUT", path: t.paths.preferences, headers: jsonHeaders(t.userToken), body: "{" }],
  ["401", { method: "GET", path: t.paths.preferences }],
  ["403", { method: "GET", path: t.paths.preferences, headers: bearer(t.clientToken) }],
  ["404", { method: "GET", path: `${t.prefix}/nope` }],
  ["405", { method: "DELETE", path: t.paths.health }],
  ["413", { method: "PUT", path: t.paths.preferences, headers: jsonHeaders(t.userToken), body: "x".repeat(16_385) }],
  ["415", { method: "PUT", path: t.paths.preferences, headers: jsonHeaders(t.userToken, "text/plain"), body: "x" }],
  ["204 OPTIONS", { method: "OPTIONS", path: t.paths.preferences }],
  ["200 HEAD", { method: "HEAD", path: t.paths.health }]
]

/** 405 where the operation's path serves no GET (the route table says), else whatever GET answers there. */
const unlessGet = (operationId: Parameters<typeof allowOnPathOf>[0]): number | undefined =>
  allowOnPathOf(operationId).split(", ").includes("GET") ? undefined : 405

/**
 * Routes and the status GET gets there; undefined: whatever GET answers (the docs page is the host's choice, a path
 * whose GET is an operation answers that operation's).
 */
const headable = (t: AuditTarget): ReadonlyArray<[string, RawRequest, number | undefined]> => [
  ["health", { method: "GET", path: t.paths.health }, 200],
  ["live", { method: "GET", path: t.paths.live }, 200],
  ["ready", { method: "GET", path: t.paths.ready }, 200],
  ["openapi", { method: "GET", path: t.paths.openapi }, 200],
  ["docs", { method: "GET", path: t.paths.docs }, undefined],
  ["preferences", { method: "GET", path: t.paths.preferences, headers: bearer(t.userToken) }, 200],
  ["payment methods", { method: "GET", path: t.paths.paymentMethods, headers: bearer(t.userToken) }, 200],
  ["plan entries", { method: "GET", path: t.paths.planEntries }, unlessGet("createPublicPlanEntry")],
  [
    "a payment method",
    { method: "GET", path: t.paths.paymentMethod(`pm_${t.run}`), headers: bearer(t.userToken) },
    unlessGet("setDefaultPaymentMethod")
  ],
  ["401", { method: "GET", path: t.paths.preferences }, 401],
  ["403", { method: "GET", path: t.paths.preferences, headers: bearer(t.clientToken) }, 403],
  ["404", { method: "GET", path: `${t.prefix}/nope` }, 404]
]

export const headerAudits: ReadonlyArray<Audit> = [
  // docs/api.md, "Precise rules": HEAD answers with GET's headers, Content-Length included (RFC 9110, 9.3.2);
  // docs/SECURITY.md, item 25.
  audit({
    id: "ACC-head-headers-like-get",
    level: "MUST",
    title: "HEAD answers every route with GET's status and headers, Content-Length included, and no body",
    needs: ["raw-http"],
    operations: ["health", "liveness", "readiness", "getLanguagePreferences", "listPaymentMethods"],
    run: async (t) => {
      for (const [label, request, status] of headable(t)) {
        const get = await t.send(request)
        const head = await t.send({ ...request, method: "HEAD" })
        if (status !== undefined) expectStatus(`GET ${label}`, get, status)
        equal(get.headers["content-length"], String(get.body.length), `GET ${label}: Content-Length`)
        equal(head.status, get.status, `HEAD ${label}: status`)
        equal(comparableHeaders(head.headers), comparableHeaders(get.headers), `HEAD ${label}: GET's headers`)
        equal(head.body.length, 0, `HEAD ${label}: no body`)
      }
    }
  }),

  audit({
    id: "ACC-headers-on-every-response",
    level: "MUST",
    title: "Cache-Control: no-store, X-Content-Type-Options: nosniff and a valid X-Request-Id on every response",
    run: async (t) => {
      for (const [label, request] of kinds(t)) expectCommonHeaders(label, await t.send(request))
    }
  }),

  audit({
    id: "ACC-headers-request-id-echoed",
    level: "MUST",
    title: "a valid incoming X-Request-Id is echoed",
    run: async (t) => {
      const ids = [`req-${t.run}`, `A.b_c-${t.run}`, "x", "z".repeat(128)]
      let index = 0
      for (const [label, request] of kinds(t)) {
        const id = ids[index++ % ids.length] ?? "x"
        const res = await t.send({ ...request, headers: { ...request.headers, "X-Request-Id": id } })
        equal(res.headers["x-request-id"], id, `${label}: echoed X-Request-Id`)
      }
    }
  }),

  audit({
    id: "ACC-headers-request-id-replaced",
    level: "MUST",
    title: "an invalid or too long X-Request-Id is replaced by a fresh valid one",
    run: async (t) => {
      for (const invalid of ["", "z".repeat(129), "has space", "a/b", "a:b", "a,b", "é"]) {
        for (const [label, request] of kinds(t)) {
          const res = await t.send({ ...request, headers: { ...request.headers, "X-Request-Id": invalid } })
          const id = res.headers["x-request-id"]
          const which = `${label} with X-Request-Id ${JSON.stringify(invalid)}`
          matches(id, REQUEST_ID_PATTERN, which)
          notEqual(id, invalid, `${which}: replaced`)
        }
      }
      const seen = new Set<string>()
      for (let attempt = 0; attempt < 5; attempt++) {
        seen.add(
          (await t.send({ method: "GET", path: t.paths.health, headers: { "X-Request-Id": "bad id" } })).headers[
            "x-request-id"
          ] ?? ""
        )
      }
      equal(seen.size, 5, "generated request ids are fresh")
    }
  })
]
