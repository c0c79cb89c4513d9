import type { RawRequest } from "../raw-http.js"
import { equal, excludes, fail, includes, matches } from "./assert.js"
import { audit, type Audit, type AuditTarget } from "./audit.js"
import {
  bearer,
  DEFAULT_PREFERENCES,
  expectJsonSuccess,
  expectPreferences,
  expectProblem,
  FORBIDDEN,
  getPreferences,
  INVALID_TOKEN,
  jsonHeaders,
  postPlanEntry,
  resetPreferences,
  text,
  UNAUTHENTICATED,
  unknownId
} from "./responses.js"

// docs/api.md, "Authentication".

/** The token of an `Authorization` value, when a response must not reflect it. */
const tokenOf = (authorization: string): string => authorization.split(" ").slice(1).join(" ").trim()

const expectInvalidToken = async (t: AuditTarget, label: string, authorization: string): Promise<void> => {
  const res = await t.send({ method: "GET", path: t.paths.preferences, headers: { Authorization: authorization } })
  expectProblem(`GET preferences, ${label}`, res, INVALID_TOKEN)
  const token = tokenOf(authorization)
  if (token.length > 3) excludes(text(res), token, `${label}: the token is not reflected`)
}

export const authenticationAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-auth-missing-401",
    level: "MUST",
    title: 'no header, an empty header, or another scheme: 401 unauthenticated, WWW-Authenticate: Bearer realm="api"',
    operations: ["getLanguagePreferences", "setDefaultPaymentMethod"],
    run: async (t) => {
      const cases: ReadonlyArray<[string, Record<string, string>]> = [
        ["no Authorization", {}],
        ["empty Authorization", { Authorization: "" }],
        ["Basic", { Authorization: "Basic dXNlcjpwYXNzd29yZA==" }],
        ["Digest", { Authorization: 'Digest username="u"' }],
        ["Bearer-like scheme", { Authorization: `Bearerx ${t.userToken}` }]
      ]
      for (const [label, headers] of cases) {
        expectProblem(
          `GET preferences, ${label}`,
          await t.send({ method: "GET", path: t.paths.preferences, headers }),
          UNAUTHENTICATED
        )
        expectProblem(
          `PUT payment method, ${label}`,
          await t.send({ method: "PUT", path: t.paths.paymentMethod(t.userPaymentMethods[0] ?? ""), headers }),
          UNAUTHENTICATED
        )
      }
    }
  }),

  audit({
    id: "ACC-auth-two-headers-401",
    level: "MUST",
    title: "more than one Authorization header: 401 invalid_token, never a pick",
    needs: ["wire"],
    operations: ["getLanguagePreferences"],
    run: async (t) => {
      // docs/SECURITY.md, "two Authorization headers": Node keeps only the first; the core sees them all.
      const exchange = t.exchange ?? fail("no raw socket")
      const valid = t.userToken
      const pairs: ReadonlyArray<[string, string, string]> = [
        ["the same valid token twice", valid, valid],
        ["a valid token, then an unknown one", valid, `unknown-${t.run}`],
        ["an unknown token, then a valid one", `unknown-${t.run}`, valid]
      ]
      for (const [label, first, second] of pairs) {
        const head =
          `GET ${t.paths.preferences} HTTP/1.1\r\nHost: ${new URL(t.url).host}\r\nAuthorization: Bearer ${first}\r\n` +
          `Authorization: Bearer ${second}\r\nConnection: close\r\n\r\n`
        const { wire } = await exchange(head)
        matches(wire, /^HTTP\/1\.1 401 /, `${label}: status line`)
        includes(wire, '"code":"invalid_token"', `${label}: code`)
      }
    }
  }),

  audit({
    id: "ACC-auth-invalid-token-401",
    level: "MUST",
    title: "Bearer/Token with an empty, malformed or unknown token: 401 invalid_token, the token not reflected",
    operations: ["getLanguagePreferences"],
    run: async (t) => {
      const cases: ReadonlyArray<[string, string]> = [
        ["Bearer without a token", "Bearer"],
        ["Token without a token", "Token"],
        ["a character outside the token grammar", "Bearer abc$def"],
        ["a space inside the token", `Bearer ${t.userToken} extra`],
        ["'=' inside the token", "Bearer ab=cd"],
        ["513 characters", `Bearer ${"a".repeat(513)}`],
        ["an unknown token", `Bearer unknown-${t.run}`],
        ["an unknown token, Token scheme", `Token unknown-${t.run}`],
        ["a known token with extra padding", `Bearer ${t.userToken}=`]
      ]
      for (const [label, authorization] of cases) await expectInvalidToken(t, label, authorization)
    }
  }),

  audit({
    id: "ACC-auth-scheme-any-case",
    level: "MUST",
    title: "the scheme is case-insensitive, Token is a synonym, several spaces may separate scheme and token",
    operations: ["getLanguagePreferences"],
    run: async (t) => {
      await resetPreferences(t, t.userToken)
      for (const scheme of ["bEaReR ", "BEARER ", "Token ", "tOkEn ", "Bearer    "]) {
        const res = await t.send({
          method: "GET",
          path: t.paths.preferences,
          headers: { Authorization: `${scheme}${t.userToken}` }
        })
        expectPreferences(`GET preferences with "${scheme}<token>"`, res, DEFAULT_PREFERENCES)
      }
    }
  }),

  audit({
    id: "ACC-auth-padded-512-token",
    level: "MUST",
    title: "a 512-character token followed by '=' padding is a valid credential; without its padding it is unknown",
    needs: ["seeded"],
    operations: ["getLanguagePreferences"],
    run: async (t) => {
      const token = t.seeded?.paddedTokenUser ?? ""
      const res = await getPreferences(t, token)
      expectPreferences("GET preferences with a padded 512-character token", res, DEFAULT_PREFERENCES)
      await expectInvalidToken(t, "a known token without its '=' padding", `Bearer ${token.replace(/=+$/, "")}`)
    }
  }),

  audit({
    id: "ACC-auth-client-403",
    level: "MUST",
    title: "a client credential on a user route: 403 insufficient_scope, before the body is looked at",
    operations: [
      "getLanguagePreferences",
      "updateLanguagePreferences",
      "setDefaultPaymentMethod",
      "listPaymentMethods"
    ],
    run: async (t) => {
      const client = t.clientToken
      const requests: ReadonlyArray<RawRequest> = [
        { method: "GET", path: t.paths.preferences, headers: bearer(client) },
        { method: "PUT", path: t.paths.preferences, headers: jsonHeaders(client), body: '{"language":"fr"}' },
        { method: "PUT", path: t.paths.preferences, headers: jsonHeaders(client, "text/plain"), body: "not json" },
        { method: "PUT", path: t.paths.preferences, headers: jsonHeaders(client), body: "{" },
        { method: "PUT", path: t.paths.paymentMethod(t.userPaymentMethods[0] ?? ""), headers: bearer(client) },
        { method: "PUT", path: t.paths.paymentMethod(unknownId(t)), headers: bearer(client) },
        { method: "GET", path: t.paths.paymentMethods, headers: bearer(client) }
      ]
      for (const request of requests)
        expectProblem(`client ${request.method} ${request.path}`, await t.send(request), FORBIDDEN)
    }
  }),

  audit({
    id: "ACC-auth-client-creates-plan-entry",
    level: "MUST",
    title: "a client credential may create a public plan entry: 201",
    operations: ["createPublicPlanEntry"],
    run: async (t) => {
      const email = `client.${t.run}@example.com`
      const res = await postPlanEntry(t, t.clientToken, JSON.stringify({ email, password: "client-pass-1" }))
      expectJsonSuccess("POST plan entry as client", res, 201)
      equal(text(res), JSON.stringify({ email, password: "********" }), "POST plan entry as client: body")
    }
  }),

  audit({
    id: "ACC-auth-before-validation",
    level: "MUST",
    title: "an unauthenticated request never learns about field rules",
    operations: ["createPublicPlanEntry"],
    run: async (t) => {
      const body = '{"email":1,"password":2,"x":3}'
      expectProblem(
        "POST plan entry without credentials, invalid body",
        await t.send({
          method: "POST",
          path: t.paths.planEntries,
          headers: { "Content-Type": "application/json" },
          body
        }),
        UNAUTHENTICATED
      )
      expectProblem(
        "POST plan entry with an unknown token, invalid body",
        await t.send({
          method: "POST",
          path: t.paths.planEntries,
          headers: { "Content-Type": "application/json", Authorization: `Bearer unknown-${t.run}` },
          body
        }),
        INVALID_TOKEN
      )
    }
  })
]
