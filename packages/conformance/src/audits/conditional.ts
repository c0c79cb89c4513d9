import type { RawResponse } from "../raw-http.js"
import { equal, fail, matches, notEqual } from "./assert.js"
import { audit, type Audit, type AuditTarget } from "./audit.js"
import {
  bearer,
  expectPaymentMethodList,
  expectPreferences,
  expectProblem,
  expectStatus,
  jsonHeaders,
  NOT_FOUND,
  PRECONDITION_FAILED,
  resetPreferences,
  show,
  text,
  unknownId
} from "./responses.js"

// docs/api.md, "Conditional requests": a strong ETag on every 200 of the preferences and payment-method resources,
// If-None-Match (weak comparison) on their GETs, If-Match (strong comparison) on their PUTs.

/** A strong entity tag: a quoted string without W/ (RFC 9110 section 8.8.3). */
const STRONG_ETAG = /^"[\x21\x23-\x7e]*"$/
/** An entity tag no representation of this API has. */
const STALE = '"0000000000000000-0"'

const etagOf = (label: string, res: RawResponse): string => {
  const etag = res.headers["etag"]
  if (etag === undefined) return fail(`${show(label, res)}: no ETag`)
  matches(etag, STRONG_ETAG, `${label}: a strong ETag`)
  return etag
}

const getWith = (t: AuditTarget, path: string, headers: Record<string, string>) =>
  t.send({ method: "GET", path, headers: { ...bearer(t.userToken), ...headers } })

const putPreferencesIf = (t: AuditTarget, body: string, ifMatch: string) =>
  t.send({
    method: "PUT",
    path: t.paths.preferences,
    headers: { ...jsonHeaders(t.userToken), "If-Match": ifMatch },
    body
  })

const setDefaultIf = (t: AuditTarget, id: string, ifMatch: string) =>
  t.send({ method: "PUT", path: t.paths.paymentMethod(id), headers: { ...bearer(t.userToken), "If-Match": ifMatch } })

/** 304: the ETag, no body, no Content-Type, the common headers. */
const expectNotModified = (label: string, res: RawResponse, etag: string): void => {
  expectStatus(label, res, 304)
  equal(res.headers["etag"], etag, `${label}: the ETag`)
  equal(res.body.length, 0, `${label}: no body`)
  equal(res.headers["cache-control"], "no-store", `${label}: Cache-Control`)
  matches(res.headers["x-request-id"], /^[A-Za-z0-9._-]{1,128}$/, `${label}: X-Request-Id`)
}

export const conditionalAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-etag-preferences",
    level: "MUST",
    title: "preferences: GET and PUT carry a strong ETag, the same for the same bytes, another when they change",
    operations: ["getLanguagePreferences", "updateLanguagePreferences"],
    run: async (t) => {
      await resetPreferences(t, t.userToken)
      const first = await getWith(t, t.paths.preferences, {})
      const etag = etagOf("GET", first)
      const again = await getWith(t, t.paths.preferences, {})
      equal(text(again), text(first), "GET again: the same body")
      equal(again.headers["etag"], etag, "GET again: the same ETag")
      const put = await t.send({
        method: "PUT",
        path: t.paths.preferences,
        headers: jsonHeaders(t.userToken),
        body: '{"timezone":60}'
      })
      expectPreferences("PUT timezone 60", put, { language: "en", timezone: 60, mfa_enabled: false })
      const changed = etagOf("PUT", put)
      notEqual(changed, etag, "PUT that changed the record: a new ETag")
      equal(
        etagOf("GET after the PUT", await getWith(t, t.paths.preferences, {})),
        changed,
        "GET after the PUT: its ETag"
      )
      await resetPreferences(t, t.userToken)
    }
  }),

  audit({
    id: "ACC-if-none-match-preferences",
    level: "MUST",
    title: "preferences GET: If-None-Match with the ETag (also weak, in a list, or *) is 304 with the ETag and no body",
    operations: ["getLanguagePreferences"],
    run: async (t) => {
      await resetPreferences(t, t.userToken)
      const etag = etagOf("GET", await getWith(t, t.paths.preferences, {}))
      for (const ifNoneMatch of [etag, `W/${etag}`, `${STALE}, ${etag}`, "*"]) {
        expectNotModified(
          `If-None-Match: ${ifNoneMatch}`,
          await getWith(t, t.paths.preferences, { "If-None-Match": ifNoneMatch }),
          etag
        )
      }
      const other = await getWith(t, t.paths.preferences, { "If-None-Match": STALE })
      expectPreferences("If-None-Match: another tag", other, { language: "en", timezone: 0, mfa_enabled: false })
      equal(other.headers["etag"], etag, "If-None-Match: another tag: the ETag")
    }
  }),

  audit({
    id: "ACC-if-match-preferences",
    level: "MUST",
    title:
      "preferences PUT: If-Match that does not match (strong comparison) is 412 precondition_failed and changes nothing",
    operations: ["updateLanguagePreferences", "getLanguagePreferences"],
    run: async (t) => {
      await resetPreferences(t, t.userToken)
      const etag = etagOf("GET", await getWith(t, t.paths.preferences, {}))
      for (const ifMatch of [STALE, `W/${etag}`]) {
        const refused = await putPreferencesIf(t, '{"timezone":120}', ifMatch)
        expectProblem(`If-Match: ${ifMatch}`, refused, PRECONDITION_FAILED)
        const after = await getWith(t, t.paths.preferences, {})
        expectPreferences(`GET after If-Match: ${ifMatch}`, after, { language: "en", timezone: 0, mfa_enabled: false })
        equal(after.headers["etag"], etag, `GET after If-Match: ${ifMatch}: the same ETag`)
      }
      const matched = await putPreferencesIf(t, '{"timezone":120}', `${STALE}, ${etag}`)
      expectPreferences("If-Match: a list with the ETag", matched, {
        language: "en",
        timezone: 120,
        mfa_enabled: false
      })
      const next = etagOf("If-Match: a list with the ETag", matched)
      expectProblem(
        "If-Match: the ETag read before the change",
        await putPreferencesIf(t, "{}", etag),
        PRECONDITION_FAILED
      )
      const any = await putPreferencesIf(t, '{"timezone":0}', "*")
      expectPreferences("If-Match: *", any, { language: "en", timezone: 0, mfa_enabled: false })
      notEqual(etagOf("If-Match: *", any), next, "If-Match: * that changed the record: a new ETag")
    }
  }),

  audit({
    id: "ACC-etag-payment-methods",
    level: "MUST",
    title: "payment methods: the list and set-default carry a strong ETag; If-None-Match on the list is 304",
    operations: ["listPaymentMethods", "setDefaultPaymentMethod"],
    run: async (t) => {
      const [first = "", second = ""] = t.userPaymentMethods
      expectStatus("set-default first", await setDefaultIf(t, first, "*"), 200)
      const res = await getWith(t, t.paths.paymentMethods, {})
      expectPaymentMethodList("GET list", res)
      const etag = etagOf("GET list", res)
      expectNotModified(
        "list If-None-Match: W/ETag",
        await getWith(t, t.paths.paymentMethods, { "If-None-Match": `W/${etag}` }),
        etag
      )
      const changed = await t.send({ method: "PUT", path: t.paths.paymentMethod(second), headers: bearer(t.userToken) })
      expectStatus("set-default second", changed, 200)
      etagOf("set-default second", changed)
      const after = await getWith(t, t.paths.paymentMethods, { "If-None-Match": etag })
      expectStatus("list If-None-Match: the ETag before the change", after, 200)
      notEqual(etagOf("list after the change", after), etag, "list after the change: a new ETag")
    }
  }),

  audit({
    id: "ACC-if-match-payment-method",
    level: "MUST",
    title: "set-default: If-Match is compared with the method's own ETag; a stale one is 412 and changes nothing",
    operations: ["setDefaultPaymentMethod", "listPaymentMethods"],
    run: async (t) => {
      const [first = "", second = ""] = t.userPaymentMethods
      const chosen = await setDefaultIf(t, first, "*")
      expectStatus("set-default first, If-Match: *", chosen, 200)
      const firstTag = etagOf("set-default first", chosen)
      const again = await setDefaultIf(t, first, firstTag)
      expectStatus("set-default first again with its ETag", again, 200)
      equal(again.headers["etag"], firstTag, "a no-op set-default: the same ETag")
      expectProblem("set-default second, If-Match: stale", await setDefaultIf(t, second, STALE), PRECONDITION_FAILED)
      const list = expectPaymentMethodList("GET list after the 412", await getWith(t, t.paths.paymentMethods, {}))
      equal(
        list.filter((method) => method.is_default).map((method) => method.id),
        [first],
        "after the 412: the default did not move"
      )
      expectProblem("an unknown id with If-Match", await setDefaultIf(t, unknownId(t), "*"), NOT_FOUND)
    }
  })
]
