import type { RawRequest } from "../raw-http.js"
import { allowOnPathOf } from "../paths.js"
import { equal, fail, includes, lessThan, greaterThan, matches } from "./assert.js"
import { audit, type Audit } from "./audit.js"
import {
  bearer,
  BODY_LIMIT,
  bytes,
  DEFAULT_PREFERENCES,
  expectPreferences,
  expectProblem,
  expectStatus,
  getPreferences,
  INVALID_BODY,
  INVALID_JSON,
  jsonHeaders,
  nested,
  padded,
  putPreferences,
  resetPreferences,
  text,
  TOO_LARGE,
  unknownId,
  UNSUPPORTED,
  validation,
  UNSENT_BODY_TIMEOUT_MS
} from "./responses.js"

// docs/api.md, "Errors" and "Precise rules": bodies, media types, the size limit, JSON.

export const bodyAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-body-invalid-json",
    level: "MUST",
    title: "invalid JSON: syntax, BOM, invalid UTF-8, duplicate keys, prototype keys, nesting over 32 levels",
    operations: ["updateLanguagePreferences"],
    run: async (t) => {
      const cases: ReadonlyArray<[string, string | Uint8Array]> = [
        ["truncated", '{"language":"fr"'],
        ["single quotes", "{'language':'fr'}"],
        ["trailing comma", '{"language":"fr",}'],
        ["leading zero", '{"timezone":01}'],
        ["NaN", '{"timezone":NaN}'],
        ["raw newline in a string", '{"language":"f\nr"}'],
        ["bad escape", '{"language":"\\x41"}'],
        ["trailing garbage", '{"language":"fr"} x'],
        ["two documents", '{"language":"fr"}{}'],
        ["whitespace only", "   "],
        ["byte-order mark", bytes([0xef, 0xbb, 0xbf], '{"language":"fr"}')],
        ["invalid UTF-8 byte", bytes('{"language":"', [0xff], '"}')],
        ["overlong UTF-8", bytes('{"language":"', [0xc0, 0xaf], '"}')],
        ["UTF-8 encoded surrogate", bytes('{"language":"', [0xed, 0xa0, 0x80], '"}')],
        ["truncated UTF-8 sequence", bytes('{"language":"', [0xe2, 0x82], '"}')],
        ["invalid UTF-8 in a key", bytes('{"', [0xfe], '":1}')],
        ["duplicate key", '{"timezone":0,"timezone":60}'],
        ["duplicate key, same value", '{"language":"fr","language":"fr"}'],
        ["duplicate key, nested", '{"id":{"a":1,"a":2}}'],
        ["duplicate key, nested in an array", '{"id":[{"a":1},{"b":1,"b":1}]}'],
        ["duplicate key through an escape", '{"timezone":0,"time\\u007aone":60}'],
        ["__proto__ key", '{"__proto__":{}}'],
        ["__proto__ key, escaped", '{"__proto\\u005f_":{"language":"fr"}}'],
        ["constructor key", '{"constructor":{"prototype":{}}}'],
        ["constructor key, nested", '{"id":{"constructor":1}}'],
        ["prototype key in an array", '{"id":[{"prototype":1}]}'],
        ["33 levels", nested("language", 33)]
      ]
      for (const [label, body] of cases)
        expectProblem(`PUT preferences, ${label}`, await putPreferences(t, t.userToken, body), INVALID_JSON)
    }
  }),

  audit({
    id: "ACC-body-nesting-32",
    level: "MUST",
    title: "32 levels of nesting is valid JSON, then fails field validation",
    operations: ["updateLanguagePreferences"],
    run: async (t) => {
      const user = t.userToken
      await resetPreferences(t, user)
      expectProblem(
        "32 levels",
        await putPreferences(t, user, nested("language", 32)),
        validation([["/language", "invalid_type"]])
      )
      expectProblem(
        "32 levels in timezone",
        await putPreferences(t, user, nested("timezone", 32)),
        validation([["/timezone", "invalid_type"]])
      )
      expectPreferences(
        "32 levels in a read-only field",
        await putPreferences(t, user, nested("id", 32)),
        DEFAULT_PREFERENCES
      )
    }
  }),

  audit({
    id: "ACC-body-not-an-object",
    level: "MUST",
    title: "a body that is valid JSON but not an object: 400 invalid_body",
    operations: ["updateLanguagePreferences", "setDefaultPaymentMethod"],
    run: async (t) => {
      for (const body of ["[]", "[{}]", '"x"', "1", "-0.5", "null", "true", " [ ] "]) {
        expectProblem(`PUT preferences ${body}`, await putPreferences(t, t.userToken, body), INVALID_BODY)
        expectProblem(
          `PUT payment method ${body}`,
          await t.send({
            method: "PUT",
            path: t.paths.paymentMethod(unknownId(t)),
            headers: jsonHeaders(t.userToken),
            body
          }),
          INVALID_BODY
        )
      }
    }
  }),

  audit({
    id: "ACC-body-missing",
    level: "MUST",
    title: "no body, or a zero-byte body whatever its Content-Type, where a body is required: 400 invalid_json",
    operations: ["updateLanguagePreferences"],
    run: async (t) => {
      const user = t.userToken
      const path = t.paths.preferences
      const cases: ReadonlyArray<[string, RawRequest]> = [
        ["no body", { method: "PUT", path, headers: jsonHeaders(user) }],
        ["Content-Length: 0", { method: "PUT", path, headers: jsonHeaders(user), body: "" }],
        ["Content-Length: 0 and no Content-Type", { method: "PUT", path, headers: bearer(user), body: "" }],
        [
          "Content-Length: 0 and text/plain",
          { method: "PUT", path, headers: jsonHeaders(user, "text/plain"), body: "" }
        ],
        ["no body and no Content-Type", { method: "PUT", path, headers: bearer(user) }]
      ]
      for (const [label, request] of cases)
        expectProblem(`PUT preferences, ${label}`, await t.send(request), INVALID_JSON)
    }
  }),

  audit({
    id: "ACC-media-type-json-any-spelling",
    level: "MUST",
    title: "media types: application/json with an utf-8 charset in any spelling is accepted",
    operations: ["updateLanguagePreferences"],
    run: async (t) => {
      const user = t.userToken
      await resetPreferences(t, user)
      for (const contentType of [
        "application/json",
        "application/json; charset=utf-8",
        'Application/JSON; charset="UTF8"',
        "application/json;charset=UTF-8",
        "APPLICATION/JSON; CHARSET=Utf-8",
        "application/json; foo=bar"
      ]) {
        const res = await t.send({
          method: "PUT",
          path: t.paths.preferences,
          headers: jsonHeaders(user, contentType),
          body: '{"timezone":0}'
        })
        expectPreferences(`Content-Type ${contentType}`, res, DEFAULT_PREFERENCES)
      }
    }
  }),

  audit({
    id: "ACC-media-type-415",
    level: "MUST",
    title: "media types: anything else with a body is 415",
    needs: ["raw-http"],
    operations: ["updateLanguagePreferences", "createPublicPlanEntry", "setDefaultPaymentMethod"],
    run: async (t) => {
      const user = t.userToken
      const body = '{"timezone":0}'
      const path = t.paths.preferences
      expectProblem("no Content-Type", await t.send({ method: "PUT", path, headers: bearer(user), body }), UNSUPPORTED)
      expectProblem(
        "chunked body without Content-Type",
        await t.send({ method: "PUT", path, headers: bearer(user), chunks: ['{"time', 'zone":0}'] }),
        UNSUPPORTED
      )
      for (const contentType of [
        "text/plain",
        "text/json",
        "application/json; charset=latin1",
        "application/json; charset=utf-16",
        "application/merge-patch+json",
        "application/problem+json",
        "application/jsonx",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        ""
      ]) {
        expectProblem(
          `Content-Type ${contentType}`,
          await t.send({ method: "PUT", path, headers: jsonHeaders(user, contentType), body }),
          UNSUPPORTED
        )
      }
      expectProblem(
        "POST plan entry text/plain",
        await t.send({
          method: "POST",
          path: t.paths.planEntries,
          headers: jsonHeaders(user, "text/plain"),
          body: '{"email":"a@example.com","password":"password"}'
        }),
        UNSUPPORTED
      )
      expectProblem(
        "PUT payment method text/plain with a body",
        await t.send({
          method: "PUT",
          path: t.paths.paymentMethod(unknownId(t)),
          headers: jsonHeaders(user, "text/plain"),
          body: "{}"
        }),
        UNSUPPORTED
      )
    }
  }),

  audit({
    id: "ACC-size-limit-bytes",
    level: "MUST",
    title: "size: 16384 bytes pass, 16385 are 413 Content Too Large, counted in bytes",
    operations: ["updateLanguagePreferences", "getLanguagePreferences", "setDefaultPaymentMethod"],
    run: async (t) => {
      const user = t.userToken
      await resetPreferences(t, user)
      const exact = padded('{"language":"fr"', "}", BODY_LIMIT)
      equal(Buffer.byteLength(exact), BODY_LIMIT, "the body at the limit")
      expectPreferences("16384 bytes", await putPreferences(t, user, exact), {
        language: "fr",
        timezone: 0,
        mfa_enabled: false
      })
      expectProblem(
        "16385 bytes",
        await putPreferences(t, user, padded('{"language":"de"', "}", BODY_LIMIT + 1)),
        TOO_LARGE
      )
      // Three-byte characters: under 16384 UTF-16 units, over 16384 bytes.
      const multibyte = `{"language":"de","x":"${"€".repeat(5_455)}"}`
      lessThan(multibyte.length, BODY_LIMIT, "the multibyte body in UTF-16 units")
      greaterThan(Buffer.byteLength(multibyte), BODY_LIMIT, "the multibyte body in bytes")
      expectProblem("over 16384 bytes in fewer characters", await putPreferences(t, user, multibyte), TOO_LARGE)
      expectPreferences("GET after 413s", await getPreferences(t, user), {
        language: "fr",
        timezone: 0,
        mfa_enabled: false
      })
      expectProblem(
        "set-default with 16385 bytes",
        await t.send({
          method: "PUT",
          path: t.paths.paymentMethod(t.otherUserPaymentMethods[0] ?? ""),
          headers: jsonHeaders(t.otherUserToken),
          body: padded('{"is_default":true', "}", BODY_LIMIT + 1)
        }),
        TOO_LARGE
      )
    }
  }),

  audit({
    id: "ACC-size-declared-length",
    level: "MUST",
    title: "size: a large declared Content-Length is refused without waiting for the body",
    needs: ["raw-http"],
    operations: ["updateLanguagePreferences"],
    run: async (t) => {
      const res = await t.send({
        method: "PUT",
        path: t.paths.preferences,
        headers: jsonHeaders(t.userToken),
        body: '{"language":"de"',
        declaredLength: 10 * 1024 * 1024,
        timeoutMs: UNSENT_BODY_TIMEOUT_MS
      })
      expectProblem("10 MB declared, 16 bytes sent", res, TOO_LARGE)
    }
  }),

  audit({
    id: "ACC-transfer-coding-501",
    level: "MUST",
    title: "a transfer coding other than chunked is 501 not_implemented, after the credentials",
    needs: ["wire"],
    operations: ["updateLanguagePreferences"],
    run: async (t) => {
      // docs/SECURITY.md, "Transfer-Encoding: gzip, chunked": the body is never read as if it were plain JSON.
      const exchange = t.exchange ?? fail("no raw socket")
      const request = (authorization: string) =>
        `PUT ${t.paths.preferences} HTTP/1.1\r\nHost: ${new URL(t.url).host}\r\n${authorization}` +
        `Content-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\nConnection: close\r\n\r\n` +
        `2\r\n{}\r\n0\r\n\r\n`
      const refused = await exchange(request(`Authorization: Bearer ${t.userToken}\r\n`))
      matches(refused.wire, /^HTTP\/1\.1 501 /, "gzip, chunked: status line")
      includes(refused.wire, '"code":"not_implemented"', "gzip, chunked: code")
      matches(refused.wire, /content-type: application\/problem\+json; charset=utf-8/i, "gzip, chunked: Content-Type")
      const anonymous = await exchange(request(""))
      matches(anonymous.wire, /^HTTP\/1\.1 401 /, "gzip, chunked without credentials: status line")
    }
  }),

  audit({
    id: "ACC-size-chunked",
    level: "MUST",
    title: "size: a chunked body counts as it arrives",
    needs: ["raw-http"],
    operations: ["updateLanguagePreferences"],
    run: async (t) => {
      const user = t.userToken
      await resetPreferences(t, user)
      expectPreferences(
        "chunked, under the limit",
        await t.send({
          method: "PUT",
          path: t.paths.preferences,
          headers: jsonHeaders(user),
          chunks: ['{"lang', 'uage"', ':"fr"}']
        }),
        { language: "fr", timezone: 0, mfa_enabled: false }
      )
      const chunks = ['{"language":"de"', " ".repeat(8_000), " ".repeat(8_000), `${" ".repeat(368)}}`]
      equal(Buffer.byteLength(chunks.join("")), BODY_LIMIT + 1, "the chunked body")
      expectProblem(
        "chunked, 16385 bytes in four chunks",
        await t.send({ method: "PUT", path: t.paths.preferences, headers: jsonHeaders(user), chunks }),
        TOO_LARGE
      )
    }
  }),

  audit({
    id: "ACC-body-ignored-on-get-head-options",
    level: "MUST",
    title: "bodies and Content-Length on GET, HEAD and OPTIONS are ignored",
    needs: ["raw-http"],
    operations: ["getLanguagePreferences"],
    run: async (t) => {
      const user = t.userToken
      await resetPreferences(t, user)
      const plain = await getPreferences(t, user)
      const withBody = await t.send({
        method: "GET",
        path: t.paths.preferences,
        headers: jsonHeaders(user, "text/plain"),
        body: "not json at all"
      })
      expectPreferences("GET with a text/plain body", withBody, DEFAULT_PREFERENCES)
      equal(text(withBody), text(plain), "GET with a text/plain body: the same body as without")
      const declared = await t.send({
        method: "GET",
        path: t.paths.preferences,
        headers: jsonHeaders(user),
        body: "{",
        declaredLength: 10 * 1024 * 1024,
        timeoutMs: UNSENT_BODY_TIMEOUT_MS
      })
      expectPreferences("GET with 10 MB declared", declared, DEFAULT_PREFERENCES)
      const head = await t.send({
        method: "HEAD",
        path: t.paths.preferences,
        headers: jsonHeaders(user, "text/plain"),
        body: "not json"
      })
      equal(head.status, 200, "HEAD with a text/plain body: status")
      equal(head.body.length, 0, "HEAD with a text/plain body: no body")
      const options = await t.send({
        method: "OPTIONS",
        path: t.paths.preferences,
        headers: { "Content-Type": "text/plain" },
        body: "x".repeat(20_000)
      })
      expectStatus("OPTIONS with a large text/plain body", options, 204)
      equal(
        options.headers["allow"],
        allowOnPathOf("updateLanguagePreferences"),
        "OPTIONS with a large text/plain body: Allow"
      )
    }
  })
]
