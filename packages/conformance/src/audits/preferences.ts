import { equal, includes, isTrue, lessThan } from "./assert.js"
import { audit, type Audit } from "./audit.js"
import {
  DEFAULT_PREFERENCES,
  expectPreferences,
  expectProblem,
  getPreferences,
  pause,
  putPreferences,
  resetPreferences,
  text,
  validation
} from "./responses.js"

// docs/api.md, "Update language preferences (PUT)" and the GET companion. The audits that change the user's
// preferences start from the defaults (`resetPreferences`); the first use of a user needs users no request has used.

export const preferenceAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-preferences-first-get",
    level: "MUST",
    title: "GET creates the defaults on first use (en, 0, false) with created_at == updated_at; GET again is identical",
    needs: ["seeded"],
    operations: ["getLanguagePreferences"],
    run: async (t) => {
      const user = t.seeded?.newUserForGet ?? ""
      const first = await getPreferences(t, user)
      const created = expectPreferences("first GET", first, DEFAULT_PREFERENCES)
      equal(created.updated_at, created.created_at, "first GET: updated_at equals created_at")
      const second = await getPreferences(t, user)
      equal(text(second), text(first), "second GET: the same body")
    }
  }),

  audit({
    id: "ACC-preferences-first-put",
    level: "MUST",
    title: "the first PUT creates the record with created_at == updated_at; {} on a new user returns the defaults",
    needs: ["seeded"],
    operations: ["updateLanguagePreferences", "getLanguagePreferences"],
    run: async (t) => {
      const empty = expectPreferences(
        "first PUT {}",
        await putPreferences(t, t.seeded?.newUserForEmptyPut ?? "", "{}"),
        DEFAULT_PREFERENCES
      )
      equal(empty.updated_at, empty.created_at, "first PUT {}: updated_at equals created_at")
      const user = t.seeded?.newUserForPut ?? ""
      const created = expectPreferences(
        "first PUT with values",
        await putPreferences(t, user, '{"language":"EN-us","timezone":60,"mfa_enabled":true}'),
        { language: "en-US", timezone: 60, mfa_enabled: true }
      )
      equal(created.updated_at, created.created_at, "updated_at equals created_at on creation")
      const read = await getPreferences(t, user)
      expectPreferences("GET after the first PUT", read, { language: "en-US", timezone: 60, mfa_enabled: true })
      equal(text(read), JSON.stringify(created), "GET after the first PUT: the PUT's body")
    }
  }),

  audit({
    id: "ACC-preferences-merge",
    level: "MUST",
    title: "merge semantics; updated_at moves only on a real change; id and created_at never change",
    operations: ["updateLanguagePreferences", "getLanguagePreferences"],
    run: async (t) => {
      const user = t.userToken
      await resetPreferences(t, user)
      const start = expectPreferences("PUT language", await putPreferences(t, user, '{"language":"fr"}'), {
        language: "fr",
        timezone: 0,
        mfa_enabled: false
      })
      await pause(5)
      const tz = expectPreferences("PUT timezone", await putPreferences(t, user, '{"timezone":120}'), {
        language: "fr",
        timezone: 120,
        mfa_enabled: false
      })
      equal(tz.id, start.id, "PUT timezone: id")
      equal(tz.created_at, start.created_at, "PUT timezone: created_at")
      isTrue(tz.updated_at > start.updated_at, "PUT timezone: updated_at moved")
      await pause(5)
      const mfaRes = await putPreferences(t, user, '{"mfa_enabled":true}')
      const mfa = expectPreferences("PUT mfa_enabled", mfaRes, { language: "fr", timezone: 120, mfa_enabled: true })
      isTrue(mfa.updated_at > tz.updated_at, "PUT mfa_enabled: updated_at moved")
      await pause(5)
      const unchanged: ReadonlyArray<[string, string]> = [
        ["{}", "{}"],
        ["the same values", '{"language":"fr","timezone":120,"mfa_enabled":true}'],
        ["the same language in another case", '{"language":"FR"}'],
        ["the same timezone as 120.0", '{"timezone":120.0}']
      ]
      for (const [label, body] of unchanged) {
        const res = await putPreferences(t, user, body)
        expectPreferences(`PUT ${label}`, res, { language: "fr", timezone: 120, mfa_enabled: true })
        equal(text(res), text(mfaRes), `PUT ${label} changes nothing`)
      }
      equal(text(await getPreferences(t, user)), text(mfaRes), "GET after no-ops")
      const back = expectPreferences(
        "PUT two fields",
        await putPreferences(t, user, '{"timezone":0,"mfa_enabled":false}'),
        { language: "fr", timezone: 0, mfa_enabled: false }
      )
      equal(back.id, start.id, "PUT two fields: id")
      equal(back.created_at, start.created_at, "PUT two fields: created_at")
      isTrue(back.updated_at > mfa.updated_at, "PUT two fields: updated_at moved")
    }
  }),

  audit({
    id: "ACC-preferences-read-only-ignored",
    level: "MUST",
    title: "read-only id, created_at, updated_at are ignored whatever their type or value",
    operations: ["updateLanguagePreferences", "getLanguagePreferences"],
    run: async (t) => {
      const user = t.userToken
      await resetPreferences(t, user)
      const initial = await getPreferences(t, user)
      const record0 = expectPreferences("GET", initial, DEFAULT_PREFERENCES)
      for (const body of [
        '{"id":"x"}',
        '{"id":999999,"created_at":"2000-01-01T00:00:00.000Z","updated_at":"2000-01-01T00:00:00.000Z"}',
        '{"id":null,"created_at":5,"updated_at":false}',
        '{"id":{"nested":[1,2]},"created_at":[],"updated_at":{}}'
      ]) {
        const res = await putPreferences(t, user, body)
        expectPreferences(`PUT ${body}`, res, DEFAULT_PREFERENCES)
        equal(text(res), text(initial), `PUT ${body}: nothing changed`)
      }
      await pause(5)
      const changed = expectPreferences(
        "PUT language with a read-only id",
        await putPreferences(t, user, '{"id":1,"language":"de"}'),
        { language: "de", timezone: 0, mfa_enabled: false }
      )
      equal(changed.id, record0.id, "PUT language with a read-only id: id")
      equal(changed.created_at, record0.created_at, "PUT language with a read-only id: created_at")
    }
  }),

  audit({
    id: "ACC-preferences-language",
    level: "MUST",
    title: "language: canonicalised, at most 35 characters, Intl-accepted tags only; a rejected PUT changes nothing",
    operations: ["updateLanguagePreferences", "getLanguagePreferences"],
    run: async (t) => {
      const user = t.userToken
      await resetPreferences(t, user)
      const tag35 = "en-x-abcdefgh-abcdefgh-abcdefgh-abc"
      const accepted: ReadonlyArray<[string, string]> = [
        ["EN-us", "en-US"],
        ["iw", "he"],
        ["zh-hant-tw", "zh-Hant-TW"],
        [tag35, tag35]
      ]
      for (const [sent, stored] of accepted) {
        expectPreferences(`language ${sent}`, await putPreferences(t, user, JSON.stringify({ language: sent })), {
          language: stored,
          timezone: 0,
          mfa_enabled: false
        })
      }
      const rejected: ReadonlyArray<[string, string, string]> = [
        ["en_US", '"en_US"', "invalid_format"],
        ["empty", '""', "too_short"],
        ["36 characters", JSON.stringify(`${tag35}d`), "too_long"],
        ["36 characters that are no tag", JSON.stringify("x".repeat(36)), "too_long"],
        ["a number", "5", "invalid_type"],
        ["null", "null", "invalid_type"],
        ["an array", '["en"]', "invalid_type"],
        ["an object", '{"tag":"en"}', "invalid_type"],
        ["the string __proto__", '"__proto__"', "invalid_format"]
      ]
      for (const [label, value, code] of rejected) {
        expectProblem(
          `language ${label}`,
          await putPreferences(t, user, `{"language":${value}}`),
          validation([["/language", code]])
        )
      }
      expectPreferences("GET after rejected PUTs", await getPreferences(t, user), {
        language: tag35,
        timezone: 0,
        mfa_enabled: false
      })
    }
  }),

  audit({
    id: "ACC-preferences-timezone",
    level: "MUST",
    title: "timezone: integer minutes, -720..840, multiple of 15, read as a JSON number",
    operations: ["updateLanguagePreferences", "getLanguagePreferences"],
    run: async (t) => {
      const user = t.userToken
      await resetPreferences(t, user)
      const accepted: ReadonlyArray<[string, number]> = [
        ["60.0", 60],
        ["6e1", 60],
        ["-720", -720],
        ["840", 840],
        ["345", 345],
        ["0", 0]
      ]
      for (const [sent, stored] of accepted) {
        const res = await putPreferences(t, user, `{"timezone":${sent}}`)
        expectPreferences(`timezone ${sent}`, res, { language: "en", timezone: stored, mfa_enabled: false })
      }
      const rejected: ReadonlyArray<[string, string]> = [
        ["61", "invalid_format"],
        ["-10", "invalid_format"],
        ["855", "out_of_range"],
        ["-735", "out_of_range"],
        ["1000", "out_of_range"],
        ["30.5", "invalid_type"],
        ["1e400", "invalid_type"],
        ['"60"', "invalid_type"],
        ["null", "invalid_type"],
        ["true", "invalid_type"],
        ["[60]", "invalid_type"]
      ]
      for (const [value, code] of rejected) {
        expectProblem(
          `timezone ${value}`,
          await putPreferences(t, user, `{"timezone":${value}}`),
          validation([["/timezone", code]])
        )
      }
      expectPreferences("GET after rejected PUTs", await getPreferences(t, user), DEFAULT_PREFERENCES)
    }
  }),

  audit({
    id: "ACC-preferences-mfa",
    level: "MUST",
    title: "mfa_enabled: JSON booleans only",
    operations: ["updateLanguagePreferences"],
    run: async (t) => {
      const user = t.userToken
      await resetPreferences(t, user)
      expectPreferences("mfa true", await putPreferences(t, user, '{"mfa_enabled":true}'), {
        language: "en",
        timezone: 0,
        mfa_enabled: true
      })
      expectPreferences("mfa false", await putPreferences(t, user, '{"mfa_enabled":false}'), DEFAULT_PREFERENCES)
      for (const value of ['"true"', "1", "0", "null", '"false"', "[]"]) {
        expectProblem(
          `mfa_enabled ${value}`,
          await putPreferences(t, user, `{"mfa_enabled":${value}}`),
          validation([["/mfa_enabled", "invalid_type"]])
        )
      }
    }
  }),

  audit({
    id: "ACC-preferences-every-bad-field",
    level: "MUST",
    title: "several bad fields: one error per field, sorted by pointer, nothing applied",
    operations: ["updateLanguagePreferences", "getLanguagePreferences"],
    run: async (t) => {
      const user = t.userToken
      await resetPreferences(t, user)
      expectProblem(
        "four bad fields",
        await putPreferences(t, user, '{"language":"en_US","timezone":61,"mfa_enabled":"true","x":1}'),
        validation([
          ["/language", "invalid_format"],
          ["/mfa_enabled", "invalid_type"],
          ["/timezone", "invalid_format"],
          ["/x", "unknown_field"]
        ])
      )
      expectProblem(
        "one bad field among good ones",
        await putPreferences(t, user, '{"zeta":true,"language":"de","alpha":1}'),
        validation([
          ["/alpha", "unknown_field"],
          ["/zeta", "unknown_field"]
        ])
      )
      expectPreferences("GET: nothing applied", await getPreferences(t, user), DEFAULT_PREFERENCES)
    }
  }),

  // docs/api.md, "Precise rules" (problem bodies); docs/SECURITY.md, item 26: an answer no larger than a few entries.
  audit({
    id: "ACC-preferences-field-errors-capped",
    level: "MUST",
    title: "1,500 unknown fields: the first 20 errors by pointer, the count in detail, a body under 4 KB",
    operations: ["updateLanguagePreferences"],
    run: async (t) => {
      const names = Array.from({ length: 1500 }, (_, index) => `f${String(index).padStart(4, "0")}`)
      const res = await putPreferences(t, t.userToken, `{${names.map((name) => `"${name}":0`).join(",")}}`)
      expectProblem(
        "1,500 unknown fields",
        res,
        validation(names.slice(0, 20).map((name) => [`/${name}`, "unknown_field"]))
      )
      includes(text(res), "1500", "1,500 unknown fields: detail says how many")
      lessThan(res.body.length, 4096, "1,500 unknown fields: problem body size")
    }
  })
]
