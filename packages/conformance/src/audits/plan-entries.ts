import { equal, excludes } from "./assert.js"
import { audit, type Audit } from "./audit.js"
import {
  bearer,
  expectJsonSuccess,
  expectProblem,
  expectStatus,
  INVALID_BODY,
  INVALID_JSON,
  padded,
  postPlanEntry,
  text,
  TOO_LARGE,
  validation,
  type FieldErrors
} from "./responses.js"

// docs/api.md, "Create public plan entry (POST)" and the email rules under "Precise rules". Every address carries the
// run's suffix: each run creates entries of its own.

const masked = (email: string): string => JSON.stringify({ email, password: "********" })

export const planEntryAudits: ReadonlyArray<Audit> = [
  audit({
    id: "ACC-plan-entry-created",
    level: "MUST",
    title: "201 with the email trimmed and its domain lower-cased, the password masked",
    operations: ["createPublicPlanEntry"],
    run: async (t) => {
      const res = await postPlanEntry(
        t,
        t.userToken,
        JSON.stringify({ email: ` \t Alice.${t.run}@Example.COM \n`, password: "correct horse" })
      )
      expectJsonSuccess("POST plan entry", res, 201)
      equal(text(res), masked(`Alice.${t.run}@example.com`), "POST plan entry: body")
    }
  }),

  audit({
    id: "ACC-plan-entry-duplicate-same-201",
    level: "MUST",
    title: "a duplicate email (any case) gets the same 201 a new one would (no enumeration)",
    operations: ["createPublicPlanEntry"],
    run: async (t) => {
      const first = await postPlanEntry(
        t,
        t.userToken,
        JSON.stringify({ email: `dup.${t.run}@example.com`, password: "first-password" })
      )
      expectJsonSuccess("first entry", first, 201)
      equal(text(first), masked(`dup.${t.run}@example.com`), "first entry: body")
      const again = await postPlanEntry(
        t,
        t.userToken,
        JSON.stringify({ email: `dup.${t.run}@example.com`, password: "second-password" })
      )
      expectJsonSuccess("same email again", again, 201)
      equal(text(again), text(first), "same email again: body")
      const otherCase = await postPlanEntry(
        t,
        t.userToken,
        JSON.stringify({ email: `DUP.${t.run}@EXAMPLE.com`, password: "third-password" })
      )
      expectJsonSuccess("same email, other case", otherCase, 201)
      equal(text(otherCase), masked(`DUP.${t.run}@example.com`), "same email, other case: body")
    }
  }),

  audit({
    id: "ACC-plan-entry-boundaries",
    level: "MUST",
    title: "accepts the boundaries: a 254-character address, every dot-atom character, 8 and 128 code-point passwords",
    operations: ["createPublicPlanEntry"],
    run: async (t) => {
      const local = `l${t.run}`.padEnd(64, "x")
      const domain = `${"A".repeat(63)}.${"b".repeat(63)}.${"c".repeat(57)}.com`
      const longest = `${local}@${domain}`
      equal(longest.length, 254, "the longest address")
      const accepted: ReadonlyArray<[string, string, string]> = [
        ["254 characters, padded with spaces", `  ${longest}  `, "password"],
        ["dot-atom specials", `a!#$%&'*+/=?^_\`{|}~-.${t.run}@sub-1.Example.org`, "12345678"],
        ["8 emoji (16 UTF-16 units)", `emoji8.${t.run}@example.com`, "😀".repeat(8)],
        ["128 emoji (256 UTF-16 units)", `emoji128.${t.run}@example.com`, "😀".repeat(128)]
      ]
      for (const [label, email, password] of accepted) {
        const res = await postPlanEntry(t, t.userToken, JSON.stringify({ email, password }))
        expectJsonSuccess(label, res, 201)
        const [localPart, domainPart] = email.trim().split(/@(?=[^@]*$)/)
        equal(text(res), masked(`${localPart}@${(domainPart ?? "").toLowerCase()}`), `${label}: body`)
      }
    }
  }),

  audit({
    id: "ACC-plan-entry-field-errors",
    level: "MUST",
    title: "field errors: exact codes, one per field, sorted by pointer; the password never reflected",
    operations: ["createPublicPlanEntry"],
    run: async (t) => {
      const run = t.run
      const local = `l${run}`.padEnd(64, "x")
      const cases: ReadonlyArray<[string, unknown, FieldErrors]> = [
        [
          "empty object",
          {},
          [
            ["/email", "required"],
            ["/password", "required"]
          ]
        ],
        ["password missing", { email: `x.${run}@example.com` }, [["/password", "required"]]],
        [
          "wrong types",
          { email: 1, password: null },
          [
            ["/email", "invalid_type"],
            ["/password", "invalid_type"]
          ]
        ],
        [
          "empty strings",
          { email: "", password: "" },
          [
            ["/email", "too_short"],
            ["/password", "too_short"]
          ]
        ],
        ["7-character password", { email: `x.${run}@example.com`, password: "1234567" }, [["/password", "too_short"]]],
        ["7 emoji password", { email: `x.${run}@example.com`, password: "😀".repeat(7) }, [["/password", "too_short"]]],
        [
          "129-character password",
          { email: `x.${run}@example.com`, password: "p".repeat(129) },
          [["/password", "too_long"]]
        ],
        [
          "255-character email",
          { email: `${local}@${"a".repeat(63)}.${"b".repeat(63)}.${"c".repeat(58)}.com`, password: "password" },
          [["/email", "too_long"]]
        ],
        [
          "65-character local part",
          { email: `${local}y@example.com`, password: "password" },
          [["/email", "invalid_format"]]
        ],
        ["no @", { email: "not-an-email", password: "password" }, [["/email", "invalid_format"]]],
        ["two @", { email: "a@b@example.com", password: "password" }, [["/email", "invalid_format"]]],
        ["doubled dot", { email: "a..b@example.com", password: "password" }, [["/email", "invalid_format"]]],
        ["leading dot", { email: ".a@example.com", password: "password" }, [["/email", "invalid_format"]]],
        ["quoted local part", { email: '"a b"@example.com', password: "password" }, [["/email", "invalid_format"]]],
        ["one-label domain", { email: "a@localhost", password: "password" }, [["/email", "invalid_format"]]],
        ["numeric last label", { email: "a@example.123", password: "password" }, [["/email", "invalid_format"]]],
        ["label starting with -", { email: "a@-example.com", password: "password" }, [["/email", "invalid_format"]]],
        ["trailing dot", { email: "a@example.com.", password: "password" }, [["/email", "invalid_format"]]],
        [
          "64-character label",
          { email: `a@${"d".repeat(64)}.com`, password: "password" },
          [["/email", "invalid_format"]]
        ],
        [
          "unknown field",
          { email: `x.${run}@example.com`, password: "password", name: "x" },
          [["/name", "unknown_field"]]
        ],
        [
          "every field wrong",
          { password: 12345678, email: "bad", a: 1 },
          [
            ["/a", "unknown_field"],
            ["/email", "invalid_format"],
            ["/password", "invalid_type"]
          ]
        ]
      ]
      for (const [label, body, errors] of cases) {
        expectProblem(
          `POST plan entry, ${label}`,
          await postPlanEntry(t, t.userToken, JSON.stringify(body)),
          validation(errors)
        )
      }
      const secret = `Secret-${run}-`.padEnd(129, "s")
      const res = await postPlanEntry(
        t,
        t.userToken,
        JSON.stringify({ email: `secret.${run}@example.com`, password: secret })
      )
      expectProblem("POST plan entry, long password", res, validation([["/password", "too_long"]]))
      excludes(text(res), `Secret-${run}`, "the password is not reflected")
    }
  }),

  audit({
    id: "ACC-plan-entry-linear-trim",
    level: "MUST",
    title: "an email around a body's worth of inner whitespace is answered like any long email (linear trim)",
    operations: ["createPublicPlanEntry"],
    run: async (t) => {
      // docs/SECURITY.md, quadratic email trim: this body once blocked the event loop for 0.2-0.4 s per request.
      const hostile = JSON.stringify({ email: "a" + " ".repeat(16_300) + "a", password: "password" })
      const answers = await Promise.all([1, 2, 3, 4].map(() => postPlanEntry(t, t.userToken, hostile)))
      for (const res of answers)
        expectProblem("POST plan entry, inner whitespace", res, validation([["/email", "too_long"]]))
      expectStatus("GET health after them", await t.send({ method: "GET", path: t.paths.health }), 200)
    }
  }),

  audit({
    id: "ACC-plan-entry-not-an-object",
    level: "MUST",
    title: "plan entry bodies that are not JSON objects: 400 invalid_json or invalid_body, 413 over the limit",
    operations: ["createPublicPlanEntry"],
    run: async (t) => {
      const user = t.userToken
      expectProblem("empty body", await postPlanEntry(t, user, ""), INVALID_JSON)
      expectProblem(
        "no body",
        await t.send({ method: "POST", path: t.paths.planEntries, headers: bearer(user) }),
        INVALID_JSON
      )
      expectProblem("array", await postPlanEntry(t, user, "[]"), INVALID_BODY)
      expectProblem("string", await postPlanEntry(t, user, '"x"'), INVALID_BODY)
      expectProblem(
        "over the limit",
        await postPlanEntry(t, user, padded('{"email":"a@example.com","password":"password"', "}", 16_385)),
        TOO_LARGE
      )
    }
  })
]
