import { PIPELINE, type PipelineCheckId, type ProblemCode } from "@accord/contract"
import { allowOnPathOf } from "../paths.js"
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
  UNSENT_BODY_TIMEOUT_MS,
  type FieldErrors,
  type ProblemExpectation
} from "./responses.js"

// docs/api.md, "Errors": the order of checks, the same in every adapter, as the contract declares it (`PIPELINE`).
// Each request below is refused by two checks at once; the answer it must get is the earlier one's, read from the
// contract, never written here. The same rule on every operation, from its own refusals, is per-operation.ts's.

/** A refusal a request provokes: the check of the contract's order that makes it, and the problem it answers. */
export interface Refusal {
  readonly check: PipelineCheckId
  readonly expected: ProblemExpectation
}

/** A refusal's place in the contract's order: its check's in `PIPELINE`, then its code's among the check's codes. */
const rankOf = (refusal: Refusal): readonly [number, number] => {
  const index = PIPELINE.findIndex((check) => check.id === refusal.check)
  const codes: ReadonlyArray<ProblemCode> = PIPELINE[index]?.codes ?? []
  return [index, Math.max(0, codes.indexOf(refusal.expected.code))]
}

/** Of refusals provoked together, the one the contract answers: the earliest in its order of checks. */
export const firstRefusal = <R extends Refusal>(refusals: readonly [R, ...ReadonlyArray<R>]): R =>
  refusals.reduce((first, next) => {
    const [a, b] = [rankOf(first), rankOf(next)]
    return b[0] < a[0] || (b[0] === a[0] && b[1] < a[1]) ? next : first
  })

/** The problem the contract answers to a request refused by all of `refusals`. */
const answerTo = (...refusals: readonly [Refusal, ...ReadonlyArray<Refusal>]): ProblemExpectation =>
  firstRefusal(refusals).expected

const UNKNOWN_PATH: Refusal = { check: "route", expected: NOT_FOUND }
const wrongMethod = (allow: string): Refusal => ({ check: "route", expected: notAllowed(allow) })
const NO_CREDENTIAL: Refusal = { check: "credential", expected: UNAUTHENTICATED }
const REFUSED_TOKEN: Refusal = { check: "credential", expected: INVALID_TOKEN }
const NOT_JSON_MEDIA_TYPE: Refusal = { check: "body-headers", expected: UNSUPPORTED }
const DECLARED_TOO_LARGE: Refusal = { check: "body-headers", expected: TOO_LARGE }
const NOT_JSON: Refusal = { check: "body", expected: INVALID_JSON }
const NOT_AN_OBJECT: Refusal = { check: "body", expected: INVALID_BODY }
const fieldsRefused = (errors: FieldErrors): Refusal => ({ check: "fields", expected: validation(errors) })
const UNKNOWN_RESOURCE: Refusal = { check: "use-case", expected: NOT_FOUND }

const PREFERENCES_ALLOW = allowOnPathOf("updateLanguagePreferences")

export const orderAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-order-route-before-credentials",
    level: "MUST",
    title: "an unknown route is 404 without credentials; a known path with a wrong method is 405 before 401",
    operations: ["getLanguagePreferences", "updateLanguagePreferences"],
    run: async (t) => {
      const nope = `${t.prefix}/nope`
      expectProblem(`GET ${nope}`, await t.send({ method: "GET", path: nope }), answerTo(UNKNOWN_PATH, NO_CREDENTIAL))
      expectProblem(
        "DELETE preferences without credentials",
        await t.send({ method: "DELETE", path: t.paths.preferences }),
        answerTo(wrongMethod(PREFERENCES_ALLOW), NO_CREDENTIAL)
      )
      expectProblem(
        "DELETE preferences with a bad token",
        await t.send({ method: "DELETE", path: t.paths.preferences, headers: { Authorization: "Bearer $" } }),
        answerTo(wrongMethod(PREFERENCES_ALLOW), REFUSED_TOKEN)
      )
    }
  }),

  audit({
    id: "ACC-order-credentials-before-body",
    level: "MUST",
    title: "401 comes before 415, 413 and 400, and the server does not wait for a large declared body",
    needs: ["raw-http"],
    operations: ["updateLanguagePreferences", "createPublicPlanEntry"],
    run: async (t) => {
      expectProblem(
        "PUT preferences without credentials, text/plain",
        await t.send({
          method: "PUT",
          path: t.paths.preferences,
          headers: { "Content-Type": "text/plain" },
          body: "hello"
        }),
        answerTo(NO_CREDENTIAL, NOT_JSON_MEDIA_TYPE)
      )
      expectProblem(
        "PUT preferences without credentials, invalid JSON",
        await t.send({
          method: "PUT",
          path: t.paths.preferences,
          headers: { "Content-Type": "application/json" },
          body: "{"
        }),
        answerTo(NO_CREDENTIAL, NOT_JSON)
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
        answerTo(NO_CREDENTIAL, DECLARED_TOO_LARGE)
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
        answerTo(REFUSED_TOKEN, DECLARED_TOO_LARGE)
      )
    }
  }),

  audit({
    id: "ACC-order-media-size-json-fields",
    level: "MUST",
    title: "415 comes before 413, 413 before invalid_json, invalid_json before field validation",
    operations: ["updateLanguagePreferences"],
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
        answerTo(NOT_JSON_MEDIA_TYPE, DECLARED_TOO_LARGE)
      )
      expectProblem(
        "invalid JSON over the limit",
        await putPreferences(t, user, `{${"x".repeat(16_384)}`),
        answerTo(DECLARED_TOO_LARGE, NOT_JSON)
      )
      expectProblem(
        "invalid JSON with an invalid field",
        await putPreferences(t, user, '{"timezone":61,'),
        answerTo(NOT_JSON, fieldsRefused([["/timezone", "invalid_format"]]))
      )
      expectProblem(
        "a non-object body",
        await putPreferences(t, user, '[{"timezone":61}]'),
        answerTo(NOT_AN_OBJECT, fieldsRefused([["/timezone", "invalid_format"]]))
      )
    }
  }),

  audit({
    id: "ACC-order-fields-before-lookup",
    level: "MUST",
    title: "field validation comes before the use case: a bad body on an unknown payment method is 400",
    operations: ["setDefaultPaymentMethod"],
    run: async (t) => {
      expectProblem(
        "PUT unknown payment method with is_default false",
        await t.send({
          method: "PUT",
          path: t.paths.paymentMethod(unknownId(t)),
          headers: jsonHeaders(t.userToken),
          body: '{"is_default":false}'
        }),
        answerTo(fieldsRefused([["/is_default", "not_allowed"]]), UNKNOWN_RESOURCE)
      )
    }
  })
]
