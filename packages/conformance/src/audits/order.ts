import { audit, type Audit } from "./audit.js"
import {
  expectProblem,
  INVALID_BODY,
  INVALID_JSON,
  INVALID_TOKEN,
  jsonHeaders,
  NOT_FOUND,
  notAllowed,
  putPreferences,
  TOO_LARGE,
  UNAUTHENTICATED,
  unknownId,
  UNSUPPORTED,
  validation,
  UNSENT_BODY_TIMEOUT_MS
} from "./responses.js"

// docs/api.md, "Errors": the order of checks, the same in every adapter.

export const orderAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-order-route-before-credentials",
    level: "MUST",
    title: "an unknown route is 404 without credentials; a known path with a wrong method is 405 before 401",
    run: async (t) => {
      const nope = `${t.prefix}/nope`
      expectProblem(`GET ${nope}`, await t.send({ method: "GET", path: nope }), NOT_FOUND)
      expectProblem(
        "DELETE preferences without credentials",
        await t.send({ method: "DELETE", path: t.paths.preferences }),
        notAllowed("GET, HEAD, OPTIONS, PUT")
      )
      expectProblem(
        "DELETE preferences with a bad token",
        await t.send({ method: "DELETE", path: t.paths.preferences, headers: { Authorization: "Bearer $" } }),
        notAllowed("GET, HEAD, OPTIONS, PUT")
      )
    }
  }),

  audit({
    id: "ACC-order-credentials-before-body",
    level: "MUST",
    title: "401 comes before 415, 413 and 400, and the server does not wait for a large declared body",
    run: async (t) => {
      expectProblem(
        "PUT preferences without credentials, text/plain",
        await t.send({
          method: "PUT",
          path: t.paths.preferences,
          headers: { "Content-Type": "text/plain" },
          body: "hello"
        }),
        UNAUTHENTICATED
      )
      expectProblem(
        "PUT preferences without credentials, invalid JSON",
        await t.send({
          method: "PUT",
          path: t.paths.preferences,
          headers: { "Content-Type": "application/json" },
          body: "{"
        }),
        UNAUTHENTICATED
      )
      expectProblem(
        "PUT preferences without credentials, 10 MB declared, 12 bytes sent",
        await t.send({
          method: "PUT",
          path: t.paths.preferences,
          headers: { "Content-Type": "application/json" },
          body: '{"language":',
          declaredLength: 10 * 1024 * 1024,
          timeoutMs: UNSENT_BODY_TIMEOUT_MS
        }),
        UNAUTHENTICATED
      )
      expectProblem(
        "POST plan entry with an unknown token, 10 MB declared, 12 bytes sent",
        await t.send({
          method: "POST",
          path: t.paths.planEntries,
          headers: { "Content-Type": "application/json", Authorization: `Bearer unknown-${t.run}` },
          body: '{"email":"a"',
          declaredLength: 10 * 1024 * 1024,
          timeoutMs: UNSENT_BODY_TIMEOUT_MS
        }),
        INVALID_TOKEN
      )
    }
  }),

  audit({
    id: "ACC-order-media-size-json-fields",
    level: "MUST",
    title: "415 comes before 413, 413 before invalid_json, invalid_json before field validation",
    run: async (t) => {
      const user = t.userToken
      expectProblem(
        "text/plain body over the limit",
        await t.send({
          method: "PUT",
          path: t.paths.preferences,
          headers: jsonHeaders(user, "text/plain"),
          body: "x".repeat(20_000)
        }),
        UNSUPPORTED
      )
      expectProblem("invalid JSON over the limit", await putPreferences(t, user, `{${"x".repeat(16_384)}`), TOO_LARGE)
      expectProblem(
        "invalid JSON with an invalid field",
        await putPreferences(t, user, '{"timezone":61,'),
        INVALID_JSON
      )
      expectProblem("a non-object body", await putPreferences(t, user, '[{"timezone":61}]'), INVALID_BODY)
    }
  }),

  audit({
    id: "ACC-order-fields-before-lookup",
    level: "MUST",
    title: "field validation comes before the use case: a bad body on an unknown payment method is 400",
    run: async (t) => {
      expectProblem(
        "PUT unknown payment method with is_default false",
        await t.send({
          method: "PUT",
          path: t.paths.paymentMethod(unknownId(t)),
          headers: jsonHeaders(t.userToken),
          body: '{"is_default":false}'
        }),
        validation([["/is_default", "not_allowed"]])
      )
    }
  })
]
