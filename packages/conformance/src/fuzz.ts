import { FIELD_ISSUE_CODES, PROBLEM_CODE_STATUS, type RunningServer, type SeedInput } from "@accord/core"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { createHash } from "node:crypto"
import { Agent, METHODS } from "node:http"
import { paths, reasonPhrases, REQUEST_ID_PATTERN, TIMESTAMP_PATTERN, withoutSlash } from "./paths.js"
import type { StartServer } from "./http-conformance.js"
import { comparable, type ComparableResponse } from "./parity.js"
import { send, type RawRequest, type RawResponse } from "./raw-http.js"
import { exchange } from "./raw-socket.js"

/**
 * Property-based HTTP fuzzing against the contract. `fuzzCase(fixture)` generates hostile requests (methods, path
 * variants, credentials, media types, bodies, request ids); `expectedFor` says what the contract allows for each
 * (a set of statuses, sometimes one code); `checkResponse` checks every response for the contract's shape; and
 * `runFuzzBatch` sends a batch while tracking the two users' stored data, so that only 2xx requests may change it.
 */

// ---------------------------------------------------------------------------------------------------------------
// Fixture

export interface FuzzUser {
  readonly id: string
  readonly token: string
  /** The user's payment method ids in code-point order; the first is seeded as the default. */
  readonly methods: ReadonlyArray<string>
}

export interface FuzzFixture {
  readonly seed: SeedInput
  readonly a: FuzzUser
  readonly b: FuzzUser
  readonly client: { readonly id: string; readonly token: string }
}

/** Ids and tokens derived from `label` (e.g. the fuzz seed), so a run replays exactly on a fresh store. */
export const makeFuzzFixture = (label: string): FuzzFixture => {
  const derived = (name: string) => createHash("sha256").update(`${label}:${name}`).digest("base64url").slice(0, 32)
  const tag = createHash("sha256").update(label).digest("hex").slice(0, 8)
  // "-" < "0" < "B" < "_" < "a": code-point order, which a locale collation would not give.
  const a: FuzzUser = {
    id: `fuzz_a_${tag}`,
    token: `fz-a.${derived("a")}`,
    methods: [`-a${tag}`, `0a${tag}`, `Ba${tag}`, `_a${tag}`, `aa${tag}`]
  }
  const b: FuzzUser = { id: `fuzz_b_${tag}`, token: `fz-b.${derived("b")}`, methods: [`Bb${tag}`, `bb${tag}`] }
  const client = { id: `fuzz_client_${tag}`, token: `fz-c.${derived("client")}` }
  const seed: SeedInput = {
    users: [
      { id: a.id, token: a.token },
      { id: b.id, token: b.token }
    ],
    clients: [client],
    payment_methods: [a, b].flatMap((user) =>
      user.methods.map((id, index) => ({ id, user_id: user.id, is_default: index === 0 }))
    )
  }
  return { seed, a, b, client }
}

// ---------------------------------------------------------------------------------------------------------------
// Cases

/** Whose credential the Authorization header carries, as far as the contract is concerned. */
export type Actor =
  | "a"
  | "b"
  | "client"
  /** No header, an empty one, or a scheme other than Bearer/Token: 401 unauthenticated. */
  | "none"
  /** Bearer/Token with an empty or ill-formed token: 401 invalid_token. */
  | "malformed"
  /** A well-formed token nobody has: 401 invalid_token. */
  | "unknown"
  /** Random header text: some 401. */
  | "random"

/** What the path names under the contract. */
export type Target =
  | { readonly kind: "plan" | "preferences" | "list" | "health" | "openapi" | "docs" }
  /** A payment method; `id` is the decoded path segment. */
  | { readonly kind: "method"; readonly id: string }
  | { readonly kind: "docs_asset"; readonly exists: boolean }
  /** No route: 404. */
  | { readonly kind: "none" }
  /** A path over 2048 characters: 414. */
  | { readonly kind: "too_long" }

/**
 * What the body is for the operation it was made for: accepted, refused with a 400 of a known code, refused with
 * some 400 (a field problem), or unknown (random content). Bodies are judged only once the media type and the size
 * passed; an empty body is judged by its length.
 */
export type BodyVerdict = "valid" | "invalid_json" | "invalid_body" | "rejected" | "unknown"

export interface FuzzCase {
  /** Methods Node's parser does not know (lower-case, unknown, long) go on a raw socket: see `isWireMethod`. */
  readonly method: string
  readonly path: string
  readonly target: Target
  readonly actor: Actor
  readonly authorization: string | undefined
  readonly contentType: string | undefined
  /** Whether the contract takes `contentType` as JSON; undefined for random text. */
  readonly json: boolean | undefined
  readonly body: string | Uint8Array | undefined
  readonly verdict: BodyVerdict
  readonly requestId: string | undefined
  /** Passwords in the body: no response may contain any of them. */
  readonly passwords: ReadonlyArray<string>
}

/** CONNECT is a tunnel request Node answers by closing the connection (no listener): not an API request. */
const PARSER_METHODS: ReadonlyArray<string> = METHODS.filter((method) => method !== "CONNECT")
const COMMON_METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"] as const

/** A method Node's HTTP parser refuses before any adapter runs (bare `400` and `Connection: close`). */
export const isWireMethod = (method: string): boolean => !METHODS.includes(method)

// JSON text built from a small tree, so that bodies can carry what JSON.stringify never writes: duplicate keys,
// escaped keys, raw number literals (`60.0`, `1e400`), odd whitespace.
type Json =
  { readonly raw: string } | { readonly items: ReadonlyArray<Json> } | { readonly entries: ReadonlyArray<Entry> }
/** The key as JSON text (quoted, possibly escaped) and its value. */
type Entry = readonly [key: string, value: Json]

const raw = (text: string): Json => ({ raw: text })
const str = (value: string): Json => raw(JSON.stringify(value))
const key = (name: string): string => JSON.stringify(name)
/** The same key with every character as a \u escape: the same name to a JSON reader. */
const escapedKey = (name: string): string =>
  `"${[...name].map((char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`).join("")}"`

const writeJson = (value: Json, gap: string): string => {
  if ("raw" in value) return value.raw
  if ("items" in value) return `[${value.items.map((item) => writeJson(item, gap)).join(`,${gap}`)}]`
  return `{${gap}${value.entries.map(([name, item]) => `${name}${gap}:${gap}${writeJson(item, gap)}`).join(`,${gap}`)}${gap}}`
}

const FORBIDDEN_KEYS = ["__proto__", "constructor", "prototype"] as const
const gapArb = fc.constantFrom("", "", "", " ", "\n", "\t", "\r\n  ")

const lengths = [35, 36, 64, 65, 128, 129, 254, 255, 2000] as const
const stringArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  // Lone surrogates (JSON.stringify escapes them), NUL, separators, ligatures, case-folding traps.
  fc.constantFrom("\ud800", "\udc00x", "a\ud83d", "😀", "\u0000", "a\u2028b", "ﬃ", "İ", "é", "<script>"),
  fc.constantFrom(...lengths).map((length) => "x".repeat(length))
)
const numberArb: fc.Arbitrary<Json> = fc.oneof(
  fc
    .constantFrom(
      "0",
      "-0",
      "60",
      "60.0",
      "6e1",
      "1e400",
      "-1e400",
      "1e308",
      "9007199254740993",
      "0.1",
      "30.5",
      "1E2",
      "-0.0",
      "5e-324"
    )
    .map(raw),
  fc.integer({ min: -2000, max: 2000 }).map((n) => raw(String(n))),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => raw(JSON.stringify(n)))
)
const scalarArb: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom("null", "true", "false").map(raw),
  numberArb,
  stringArb.map(str),
  // Escapes the reader must decode itself.
  fc.constantFrom('"\\ud800"', '"\\uDFFF\\u0041"', '"\\u0000"', '"\\/"', '"\\"\\\\"').map(raw)
)
/** Any JSON value without duplicate or prototype keys, at most three levels deep. */
const cleanJsonArb: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
  value: fc.oneof(
    { maxDepth: 3, depthSize: "small" },
    scalarArb,
    fc.array(tie("value"), { maxLength: 3 }).map((items): Json => ({ items })),
    fc
      .uniqueArray(
        fc.tuple(
          fc.string({ maxLength: 8 }).filter((name) => !(FORBIDDEN_KEYS as ReadonlyArray<string>).includes(name)),
          tie("value")
        ),
        {
          maxLength: 3,
          selector: ([name]) => name
        }
      )
      .map((entries): Json => ({ entries: entries.map(([name, item]) => [key(name), item] as const) }))
  )
})).value

/** A field of an operation's body: values the contract accepts, values it refuses, and random ones. */
interface Field {
  readonly name: string
  readonly required: boolean
  readonly good: fc.Arbitrary<Json>
  readonly bad: fc.Arbitrary<Json>
  readonly random: fc.Arbitrary<Json>
}

const wrongTypes = (...omit: ReadonlyArray<string>): fc.Arbitrary<Json> =>
  fc
    .constantFrom(
      ...["null", "true", "false", "1", "-1.5", '""', '"x"', "[]", "{}", '[1,"a"]', '{"k":1}'].filter(
        (text) => !omit.includes(text)
      )
    )
    .map(raw)

/** Passwords carry a marker so that a response containing one cannot be a coincidence. */
const PASSWORD_MARK = "Pw#"

const emailField: Field = {
  name: "email",
  required: true,
  good: fc
    .tuple(
      fc.constantFrom("", " ", "\t"),
      fc.stringMatching(/^[a-z0-9]{1,12}$/),
      fc.constantFrom("", "+tag", ".o'neil"),
      fc.constantFrom("Example.COM", "example.org", "sub.Domain.io", "x-y.example")
    )
    .map(([pad, local, extra, domain]) => str(`${pad}${local}${extra}@${domain}${pad}`)),
  bad: fc.oneof(
    fc
      .constantFrom(
        "",
        "plain",
        "a..b@example.com",
        ".a@example.com",
        "a.@example.com",
        "a@example",
        "a@-x.com",
        "a@b.123",
        "a b@example.com",
        '"q"@example.com',
        "a@@b.com",
        "a@b..com",
        "a@example.com."
      )
      .map(str),
    // A 65-character local part; 255 characters in all, with every label within 63.
    fc
      .constantFrom(
        `${"a".repeat(65)}@example.com`,
        `a@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.${"e".repeat(61)}`
      )
      .map(str),
    wrongTypes('""', '"x"')
  ),
  random: fc.oneof(fc.emailAddress().map(str), stringArb.map(str))
}

const passwordField: Field = {
  name: "password",
  required: true,
  good: fc.oneof(
    fc.string({ unit: "grapheme-ascii", minLength: 5, maxLength: 40 }).map((rest) => str(PASSWORD_MARK + rest)),
    fc.constantFrom("😀".repeat(8), "é".repeat(128), `${PASSWORD_MARK}${"x".repeat(125)}`).map(str)
  ),
  bad: fc.oneof(
    fc
      .constantFrom("", "x", "short12", `${PASSWORD_MARK}${"x".repeat(126)}`, "😀".repeat(129), `${PASSWORD_MARK}é`)
      .map(str),
    wrongTypes('""', '"x"')
  ),
  random: fc.string({ unit: "binary", maxLength: 40 }).map((rest) => str(PASSWORD_MARK + rest))
}

const preferenceFields: ReadonlyArray<Field> = [
  {
    name: "language",
    required: false,
    good: fc.constantFrom("en", "fr", "EN-us", "iw", "pt-BR", "zh-Hant-TW", "de-CH-1996", "sr-Latn").map(str),
    bad: fc.oneof(
      fc.constantFrom("en_US", "", "x".repeat(36), "123", "en-", "-en", "e").map(str),
      wrongTypes('""', '"x"')
    ),
    random: stringArb.map(str)
  },
  {
    name: "timezone",
    required: false,
    good: fc.constantFrom("0", "60", "60.0", "-720", "840", "330", "-15", "6e1", "1.5e2", "15.0").map(raw),
    bad: fc.oneof(
      fc
        .constantFrom(
          "61",
          "855",
          "-735",
          "30.5",
          "1e400",
          "-1e400",
          '"60"',
          "900",
          "-721",
          "7.5",
          "1e308",
          "9007199254740993"
        )
        .map(raw),
      wrongTypes("1")
    ),
    random: numberArb
  },
  {
    name: "mfa_enabled",
    required: false,
    good: fc.constantFrom("true", "false").map(raw),
    bad: fc.oneof(fc.constantFrom('"true"', '"false"', "1", "0").map(raw), wrongTypes("true", "false")),
    random: scalarArb
  }
]
/** Read-only fields of preferences: accepted and ignored whatever their value. */
const PREFERENCE_READ_ONLY = ["id", "created_at", "updated_at"] as const

const isDefaultField: Field = {
  name: "is_default",
  required: false,
  good: fc.constant(raw("true")),
  bad: fc.oneof(fc.constantFrom("false", '"true"', "1", "0").map(raw), wrongTypes("true", "false")),
  random: scalarArb
}

interface BodyChoice {
  readonly body: string | Uint8Array | undefined
  readonly verdict: BodyVerdict
  readonly passwords: ReadonlyArray<string>
}

/** The unknown field names an operation must refuse (`validation_failed`, `unknown_field`). */
const unknownNameArb = (known: ReadonlyArray<string>, extra: ReadonlyArray<string>): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(...extra),
    fc
      .string({ maxLength: 12 })
      .filter((name) => !known.includes(name) && !(FORBIDDEN_KEYS as ReadonlyArray<string>).includes(name))
  )

type Presence = "absent" | "good" | "bad" | "random"

/** Something done to a well-formed body, with what it makes of the verdict. */
type Mutation =
  | { readonly kind: "none" }
  | { readonly kind: "duplicate" | "escaped_duplicate"; readonly index: number }
  | { readonly kind: "escaped_name"; readonly index: number }
  | {
      readonly kind: "forbidden"
      readonly name: (typeof FORBIDDEN_KEYS)[number]
      readonly escaped: boolean
      readonly nested: boolean
    }
  | { readonly kind: "deep"; readonly depth: number; readonly objects: boolean }
  | { readonly kind: "truncate"; readonly at: number }
  | { readonly kind: "trailing"; readonly text: string }

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 14, arbitrary: fc.constant({ kind: "none" } as const) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom("duplicate", "escaped_duplicate"), index: fc.nat(8) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("escaped_name"), index: fc.nat(8) }) },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("forbidden"),
      name: fc.constantFrom(...FORBIDDEN_KEYS),
      escaped: fc.boolean(),
      nested: fc.boolean()
    })
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("deep"), depth: fc.integer({ min: 28, max: 40 }), objects: fc.boolean() })
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("truncate"), at: fc.nat() }) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("trailing"), text: fc.constantFrom("x", "}", ",{}", "]", "\u0000", "{}") })
  }
)

const parses = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** Nested containers around an empty one: `depth` levels counting the outermost. */
const nested = (depth: number, objects: boolean): string =>
  objects ? `${'{"a":'.repeat(depth - 1)}{}${"}".repeat(depth - 1)}` : `${"[".repeat(depth)}${"]".repeat(depth)}`

/**
 * A JSON object body for an operation: each field absent, good, bad or random, read-only fields with any value,
 * maybe unknown fields, then maybe one mutation. The verdict follows from what was put in.
 */
const objectBodyArb = (
  fields: ReadonlyArray<Field>,
  readOnly: ReadonlyArray<string>,
  unknownNames: fc.Arbitrary<string>
): fc.Arbitrary<BodyChoice> =>
  fc
    .record({
      values: fc.tuple(
        ...fields.map((field) =>
          fc.oneof(
            {
              weight: field.required ? 1 : 3,
              arbitrary: fc.constant<readonly [Presence, Json | undefined]>(["absent", undefined])
            },
            { weight: 6, arbitrary: field.good.map((value) => ["good", value] as const) },
            { weight: 2, arbitrary: field.bad.map((value) => ["bad", value] as const) },
            { weight: 1, arbitrary: field.random.map((value) => ["random", value] as const) }
          )
        )
      ),
      readOnly: fc
        .subarray([...readOnly])
        .chain((names) => fc.tuple(...names.map((name) => cleanJsonArb.map((value): Entry => [key(name), value])))),
      unknown: fc.oneof(
        { weight: 5, arbitrary: fc.constant<ReadonlyArray<Entry>>([]) },
        {
          weight: 1,
          arbitrary: fc.array(fc.tuple(unknownNames.map(key), cleanJsonArb), { minLength: 1, maxLength: 2 })
        }
      ),
      mutation: mutationArb,
      gap: gapArb,
      shuffle: fc.boolean()
    })
    .map(({ values, readOnly: readOnlyEntries, unknown, mutation, gap, shuffle }): BodyChoice => {
      const entries: Array<Entry> = []
      const passwords: Array<string> = []
      let verdict: BodyVerdict = "valid"
      values.forEach(([presence, value], index) => {
        const field = fields[index]
        if (field === undefined) return
        if (presence === "absent" || value === undefined) {
          if (field.required) verdict = "rejected"
          return
        }
        if (presence === "bad") verdict = "rejected"
        if (presence === "random" && verdict === "valid") verdict = "unknown"
        if (field.name === "password" && "raw" in value && value.raw.startsWith('"'))
          passwords.push(JSON.parse(value.raw) as string)
        entries.push([key(field.name), value])
      })
      entries.push(...readOnlyEntries)
      // An unknown name may repeat a field's or another unknown's: that is a duplicate key, invalid JSON for sure.
      const names = new Set(entries.map(([name]) => JSON.parse(name) as string))
      for (const entry of unknown) {
        const name = JSON.parse(entry[0]) as string
        verdict = names.has(name) ? "invalid_json" : verdict === "invalid_json" ? verdict : "rejected"
        names.add(name)
        entries.push(entry)
      }
      if (shuffle) entries.reverse()
      const pick = (index: number): Entry | undefined => entries[index % Math.max(entries.length, 1)]
      switch (mutation.kind) {
        case "duplicate":
        case "escaped_duplicate": {
          const entry = pick(mutation.index) ?? [key("x"), raw("1")]
          if (entries.length === 0) entries.push(entry)
          const name = JSON.parse(entry[0]) as string
          entries.push([mutation.kind === "duplicate" ? entry[0] : escapedKey(name), entry[1]])
          verdict = "invalid_json"
          break
        }
        case "escaped_name": {
          const index = mutation.index % Math.max(entries.length, 1)
          const entry = entries[index]
          if (entry !== undefined) entries[index] = [escapedKey(JSON.parse(entry[0]) as string), entry[1]]
          break
        }
        case "forbidden": {
          const name = mutation.escaped ? escapedKey(mutation.name) : key(mutation.name)
          entries.push(
            mutation.nested
              ? [key("id"), { items: [{ entries: [[name, raw("1")]] }] }]
              : [name, { entries: [[key("mfa_enabled"), raw("true")]] }]
          )
          verdict = "invalid_json"
          break
        }
        case "deep": {
          // The body is level 1, so a value of `depth - 1` levels makes `depth` in all. Under a read-only field when
          // the operation has a free one (then only the depth matters), else under an unknown field.
          const name = readOnly.find((candidate) => !names.has(candidate)) ?? "deep_field"
          const duplicate = names.has(name)
          entries.push([key(name), raw(nested(mutation.depth - 1, mutation.objects))])
          if (mutation.depth > 32 || duplicate) verdict = "invalid_json"
          else if (!readOnly.includes(name) && verdict !== "invalid_json") verdict = "rejected"
          break
        }
        default:
          break
      }
      let text = writeJson({ entries }, gap)
      if (mutation.kind === "truncate") {
        text = text.slice(0, mutation.at % Math.max(text.length, 1))
        // A cut that still parses is rare (a cut inside trailing whitespace); judge what was sent.
        verdict = parses(text) ? "unknown" : "invalid_json"
      } else if (mutation.kind === "trailing") {
        text += mutation.text
        verdict = "invalid_json"
      }
      return { body: text, verdict, passwords }
    })

const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>): Uint8Array =>
  Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part, "utf8") : Buffer.from(part))))

/** Bodies whose verdict does not depend on the operation. */
const junkBodyArb: fc.Arbitrary<BodyChoice> = fc.oneof(
  // JSON that is not an object.
  fc
    .oneof(
      scalarArb,
      fc.array(cleanJsonArb, { maxLength: 3 }).map((items): Json => ({ items }))
    )
    .chain((value) =>
      gapArb.map((gap): BodyChoice => ({
        body: `${gap}${writeJson(value, gap)}${gap}`,
        verdict: "invalid_body",
        passwords: []
      }))
    ),
  fc
    .uint8Array({ minLength: 1, maxLength: 64 })
    .map((body): BodyChoice => ({ body, verdict: "unknown", passwords: [] })),
  fc
    .string({ unit: "binary", minLength: 1, maxLength: 64 })
    .map((body): BodyChoice => ({ body, verdict: "unknown", passwords: [] })),
  fc
    .constantFrom<ReadonlyArray<number>>(
      [0xff],
      [0xc0, 0x80],
      [0xed, 0xa0, 0x80],
      [0xe2, 0x82],
      [0xf5, 0x80, 0x80, 0x80],
      [0xfe]
    )
    .map((invalid): BodyChoice => ({
      body: bytes('{"language":"', invalid, '"}'),
      verdict: "invalid_json",
      passwords: []
    })),
  fc
    .constantFrom("{}", '{"id":1}', "[]")
    .map((text): BodyChoice => ({ body: bytes([0xef, 0xbb, 0xbf], text), verdict: "invalid_json", passwords: [] })),
  fc
    .constantFrom(
      " ",
      "\n",
      "{",
      '{"a"',
      '{"a":}',
      "{'a':1}",
      '{"a":1,}',
      "NaN",
      "undefined",
      '{"a":01}',
      '{"a":.5}',
      '{"a":"\t"}',
      "\u00a0{}"
    )
    .map((text): BodyChoice => ({ body: text, verdict: "invalid_json", passwords: [] })),
  fc
    .constantFrom(16_383, 16_384, 16_385, 20_000, 40_000)
    .map((size): BodyChoice => ({ body: `{"id":"${"x".repeat(size - 10)}"}`, verdict: "unknown", passwords: [] }))
)

/** No body at all, or an empty one (`Content-Length: 0`): the same to the contract. */
const noBodyArb: fc.Arbitrary<BodyChoice> = fc.constantFrom<BodyChoice>(
  { body: undefined, verdict: "valid", passwords: [] },
  { body: "", verdict: "valid", passwords: [] }
)

const operationBodyArb = (objects: fc.Arbitrary<BodyChoice>): fc.Arbitrary<BodyChoice> =>
  fc.oneof(
    { weight: 12, arbitrary: objects },
    { weight: 3, arbitrary: junkBodyArb },
    { weight: 1, arbitrary: noBodyArb }
  )

const planBodyArb = operationBodyArb(
  objectBodyArb(
    [emailField, passwordField],
    [],
    unknownNameArb(["email", "password"], ["Email", "name", "id", "password_confirmation"])
  )
)
const preferencesBodyArb = operationBodyArb(
  objectBodyArb(
    preferenceFields,
    PREFERENCE_READ_ONLY,
    unknownNameArb(
      ["language", "timezone", "mfa_enabled", ...PREFERENCE_READ_ONLY],
      ["user_id", "is_default", "Language", "timezone ", "mfa"]
    )
  )
)
const setDefaultBodyArb = operationBodyArb(
  objectBodyArb(
    [isDefaultField],
    [],
    unknownNameArb(["is_default"], ["user_id", "id", "created_at", "updated_at", "default", "isDefault"])
  )
)
/** Any operation's body, judged only where the verdict does not depend on the operation. */
const anyBodyArb: fc.Arbitrary<BodyChoice> = fc
  .oneof(planBodyArb, preferencesBodyArb, setDefaultBodyArb)
  .map((choice) =>
    choice.verdict === "invalid_json" || choice.verdict === "invalid_body" ? choice : { ...choice, verdict: "unknown" }
  )

// Headers.

interface ContentTypeChoice {
  readonly contentType: string | undefined
  readonly json: boolean | undefined
}

const latin1Arb = fc
  .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0xa0, max: 0xff }))
  .map((code) => String.fromCharCode(code))

const contentTypeArb: fc.Arbitrary<ContentTypeChoice> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .constantFrom(
        "application/json",
        "application/json; charset=utf-8",
        "application/json;charset=UTF-8",
        'Application/JSON; charset="utf8"',
        "APPLICATION/JSON",
        "application/json; charset=utf-8; foo=bar",
        " application/json "
      )
      .map((contentType) => ({ contentType, json: true }))
  },
  {
    weight: 2,
    arbitrary: fc
      .constantFrom(
        undefined,
        "text/plain",
        "application/json; charset=latin1",
        "application/json; charset=utf-16",
        "application/merge-patch+json",
        "application/problem+json",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        "",
        "application/json;",
        "application/json; charset",
        "application/jsonx",
        "json",
        "*/*",
        "application/json, text/plain"
      )
      .map((contentType) => ({ contentType, json: false }))
  },
  {
    weight: 1,
    arbitrary: fc.string({ unit: latin1Arb, maxLength: 40 }).map((contentType) => ({ contentType, json: undefined }))
  }
)

interface CredentialChoice {
  readonly actor: Actor
  readonly authorization: string | undefined
}

const TOKEN_TEXT = /^[A-Za-z0-9._~+/-]{1,60}={0,2}$/

const credentialArb = (
  fixture: FuzzFixture,
  weights: Readonly<Partial<Record<Actor, number>>>
): fc.Arbitrary<CredentialChoice> => {
  // Leading and trailing whitespace is not part of a header value (Node strips it), so it still names the user.
  const carrying = (actor: Actor, token: string) =>
    fc
      .tuple(
        fc.constantFrom("Bearer", "bearer", "BEARER", "Token", "token", "tOkEn"),
        fc.integer({ min: 1, max: 3 }),
        fc.constantFrom("", "", " ", "\t")
      )
      .map(([scheme, spaces, pad]): CredentialChoice => ({
        actor,
        authorization: `${pad}${scheme}${" ".repeat(spaces)}${token}${pad}`
      }))
  const { a, b, client } = fixture
  const choices: Record<Actor, fc.Arbitrary<CredentialChoice>> = {
    a: carrying("a", a.token),
    b: carrying("b", b.token),
    client: carrying("client", client.token),
    none: fc
      .constantFrom(
        undefined,
        "",
        "   ",
        "Basic eDp5",
        "Digest username=x",
        `Bearer\t${a.token}`,
        `Bearer${a.token}`,
        `Bearerx ${a.token}`,
        "Negotiate abc",
        `Basic ${a.token}`
      )
      .map((authorization): CredentialChoice => ({ actor: "none", authorization })),
    malformed: fc
      .constantFrom(
        "Bearer",
        "Token    ",
        "Bearer a$b",
        `Bearer ${"a".repeat(513)}`,
        `Bearer ${a.token} x`,
        "Bearer =abc",
        `Bearer ${a.token}%`,
        `Token ${client.token},`,
        "Bearer é"
      )
      .map((authorization): CredentialChoice => ({ actor: "malformed", authorization })),
    unknown: fc
      .oneof(
        fc.constantFrom(
          `${a.token}=`,
          a.token.toUpperCase(),
          `${"a".repeat(512)}==`,
          `${client.token}x`,
          "unknown-token"
        ),
        fc.stringMatching(TOKEN_TEXT).filter((token) => ![a.token, b.token, client.token].includes(token))
      )
      .map((token): CredentialChoice => ({ actor: "unknown", authorization: `Bearer ${token}` })),
    random: fc
      .string({ unit: latin1Arb, maxLength: 80 })
      .map((authorization): CredentialChoice => ({ actor: "random", authorization }))
  }
  const weighted = (Object.keys(choices) as Array<Actor>).map((actor) => ({
    weight: weights[actor] ?? 1,
    arbitrary: choices[actor]
  }))
  return fc.oneof(...weighted)
}

const requestIdArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(undefined) },
  { weight: 3, arbitrary: fc.stringMatching(/^[A-Za-z0-9._-]{1,128}$/) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      "r".repeat(128),
      "r".repeat(129),
      "a b",
      "é",
      "",
      " padded ",
      "x/y",
      "<script>",
      "id,other",
      "\tx"
    )
  },
  { weight: 1, arbitrary: fc.string({ unit: latin1Arb, maxLength: 140 }) }
)

// Paths.

interface PathChoice {
  readonly path: string
  readonly target: Target
}

const querySuffixArb = fc.oneof(
  fc.constantFrom("?", "?a=1&b", "#frag", "?x=%zz", `?${"q".repeat(3000)}`),
  fc.stringMatching(/^\?[A-Za-z0-9=&%._~-]{0,40}$/)
)

/** The path as given, without its trailing slash (operation paths only), or with a query or a fragment. */
const decorated = (path: string, target: Target, slashOptional: boolean): fc.Arbitrary<PathChoice> => {
  const forms = slashOptional ? [path, withoutSlash(path)] : [path]
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...forms).map((form) => ({ path: form, target })) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.constantFrom(...forms), querySuffixArb)
        .map(([form, query]) => ({ path: form + query, target }))
    }
  )
}

const percentEncoded = (id: string): string =>
  [...Buffer.from(id, "utf8")].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("")

const decodedSegment = (segment: string): string => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

const methodPathArb = (fixture: FuzzFixture): fc.Arbitrary<PathChoice> => {
  const known = [...fixture.a.methods, ...fixture.b.methods]
  const segment = fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...fixture.a.methods) },
    { weight: 2, arbitrary: fc.constantFrom(...fixture.b.methods) },
    { weight: 1, arbitrary: fc.constantFrom(...fixture.a.methods).map(percentEncoded) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/).filter((id) => !known.includes(id)),
        fc.constantFrom("z".repeat(100))
      )
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "pm.1",
        "%zz",
        "pm%201",
        "%C3%A9",
        "%00",
        "a".repeat(101),
        "..",
        ".",
        "%2F",
        "~x",
        "%2e%2e",
        "a%2Fb"
      )
    }
  )
  return segment.chain((id) => decorated(paths.paymentMethod(id), { kind: "method", id: decodedSegment(id) }, true))
}

/** Paths that name no route (each a near miss of one that does): 404. */
const NOT_FOUND_PATHS = [
  "/",
  "/api",
  "/api/",
  "/API/health",
  "/api/Health",
  "/api/health/",
  "/api/openapi.json/",
  "/api//health",
  "/api/./health",
  "/api/../api/health",
  "/apix/health",
  "/api/nope",
  "/api/users/v1/preferences/language//",
  "/api/users/v1/preferences/l%61nguage/",
  "/api/users/v1/preferences/",
  "/api/plans/v1/subscription-plans/public/x",
  "/api/payments/v1/payment-methods/a/b/",
  "/api/payments/v1/payment-methods//",
  "/api/docs/",
  "/api/health%2F",
  "/api/%2e%2e/api/health",
  "/favicon.ico",
  "*"
] as const

const pathArbs = (fixture: FuzzFixture) => ({
  plan: decorated(paths.planEntries, { kind: "plan" }, true),
  preferences: decorated(paths.preferences, { kind: "preferences" }, true),
  list: decorated(paths.paymentMethods, { kind: "list" }, true),
  method: methodPathArb(fixture),
  public: fc.oneof(
    decorated(paths.health, { kind: "health" }, false),
    decorated(paths.openapi, { kind: "openapi" }, false),
    decorated(paths.docs, { kind: "docs" }, false),
    decorated(`${paths.docs}/init.js`, { kind: "docs_asset", exists: true }, false),
    decorated(`${paths.docs}/nope.js`, { kind: "docs_asset", exists: false }, false)
  ),
  none: fc
    .oneof(
      fc.constantFrom(...NOT_FOUND_PATHS),
      fc.webSegment().map((segment) => `/${segment}`),
      fc
        .webSegment()
        .filter((segment) => !["health", "openapi.json", "docs", ""].includes(segment))
        .map((segment) => `/api/${segment}`)
    )
    .map((path): PathChoice => ({ path, target: { kind: "none" } })),
  tooLong: fc
    .tuple(fc.constantFrom("/api/", paths.paymentMethods, "/elsewhere/"), fc.integer({ min: 2049, max: 3000 }))
    .map(([start, length]): PathChoice => ({
      path: start + "a".repeat(length - start.length),
      target: { kind: "too_long" }
    }))
})

const methodArb = (primary: ReadonlyArray<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...primary) },
    { weight: 2, arbitrary: fc.constantFrom(...COMMON_METHODS) },
    { weight: 1, arbitrary: fc.constantFrom(...PARSER_METHODS) }
  )

const wireMethodArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom("get", "put", "post", "Get", "options", "head", "PUT-X", "GETS"),
  fc.stringMatching(/^[A-Z]{2,12}$/).filter(isWireMethod),
  fc.integer({ min: 50, max: 300 }).map((length) => "X".repeat(length))
)

const caseArb = (parts: {
  readonly method: fc.Arbitrary<string>
  readonly path: fc.Arbitrary<PathChoice>
  readonly credential: fc.Arbitrary<CredentialChoice>
  readonly body: fc.Arbitrary<BodyChoice>
}): fc.Arbitrary<FuzzCase> =>
  fc
    .record({
      method: parts.method,
      path: parts.path,
      credential: parts.credential,
      contentType: contentTypeArb,
      body: parts.body,
      requestId: requestIdArb
    })
    .map(({ method, path, credential, contentType, body, requestId }): FuzzCase => ({
      method,
      path: path.path,
      target: path.target,
      actor: credential.actor,
      authorization: credential.authorization,
      contentType: contentType.contentType,
      json: contentType.json,
      body: body.body,
      verdict: body.verdict,
      requestId,
      passwords: body.passwords
    }))

/**
 * One hostile request. Mostly aimed at one operation at a time (its methods, paths, credentials and bodies made
 * for it, so that valid requests happen too), some with everything random, some that Node's parser refuses.
 */
export const fuzzCase = (fixture: FuzzFixture): fc.Arbitrary<FuzzCase> => {
  const path = pathArbs(fixture)
  const users = { a: 6, b: 2, client: 1, none: 1, malformed: 1, unknown: 1, random: 1 }
  const anyPath = fc.oneof(path.plan, path.preferences, path.list, path.method, path.public, path.none, path.tooLong)
  return fc.oneof(
    {
      weight: 3,
      arbitrary: caseArb({
        method: methodArb(["POST"]),
        path: path.plan,
        credential: credentialArb(fixture, { ...users, client: 4 }),
        body: planBodyArb
      })
    },
    {
      weight: 4,
      arbitrary: caseArb({
        method: methodArb(["PUT", "PUT", "GET", "HEAD"]),
        path: path.preferences,
        credential: credentialArb(fixture, users),
        body: preferencesBodyArb
      })
    },
    {
      weight: 2,
      arbitrary: caseArb({
        method: methodArb(["GET", "HEAD"]),
        path: path.list,
        credential: credentialArb(fixture, users),
        body: anyBodyArb
      })
    },
    {
      weight: 4,
      arbitrary: caseArb({
        method: methodArb(["PUT"]),
        path: path.method,
        credential: credentialArb(fixture, users),
        body: setDefaultBodyArb
      })
    },
    {
      weight: 1,
      arbitrary: caseArb({
        method: methodArb(["GET", "HEAD", "OPTIONS"]),
        path: path.public,
        credential: credentialArb(fixture, {}),
        body: anyBodyArb
      })
    },
    {
      weight: 3,
      arbitrary: caseArb({
        method: fc.constantFrom(...PARSER_METHODS),
        path: anyPath,
        credential: credentialArb(fixture, {}),
        body: anyBodyArb
      })
    },
    {
      weight: 1,
      arbitrary: caseArb({
        method: wireMethodArb,
        path: anyPath,
        credential: credentialArb(fixture, {}),
        body: anyBodyArb
      })
    }
  )
}

// ---------------------------------------------------------------------------------------------------------------
// What the contract allows

/** Every problem code with its status, and every field issue code: core's own lists (docs/api.md, "Errors"). */
export const PROBLEM_CODES: Readonly<Record<string, number>> = PROBLEM_CODE_STATUS
export const FIELD_CODES: ReadonlyArray<string> = FIELD_ISSUE_CODES

/** `Allow` of each route (its methods, HEAD where GET is, OPTIONS; sorted). */
const ALLOW: Readonly<Record<Exclude<Target["kind"], "none" | "too_long">, string>> = {
  plan: "OPTIONS, POST",
  preferences: "GET, HEAD, OPTIONS, PUT",
  list: "GET, HEAD, OPTIONS",
  method: "OPTIONS, PUT",
  health: "GET, HEAD, OPTIONS",
  openapi: "GET, HEAD, OPTIONS",
  docs: "GET, HEAD, OPTIONS",
  docs_asset: "GET, HEAD, OPTIONS"
}

const BODY_LIMIT = 16_384

export interface Expected {
  readonly statuses: ReadonlyArray<number>
  /** The problem code when the contract fixes it. */
  readonly code?: string
}

const only = (status: number, code?: string): Expected =>
  code === undefined ? { statuses: [status] } : { statuses: [status], code }

export const bodyLength = (body: FuzzCase["body"]): number =>
  body === undefined ? 0 : typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.length

/** The body stage (docs/api.md, "Errors": media type, size, JSON, fields) of an operation that reads one. */
const bodyStage = (fuzz: FuzzCase, success: number, required: boolean): Expected => {
  if (bodyLength(fuzz.body) === 0) return required ? only(400, "invalid_json") : only(success)
  const statuses = new Set<number>()
  if (fuzz.json !== true) statuses.add(415)
  if (fuzz.json !== false) {
    if (bodyLength(fuzz.body) > BODY_LIMIT) statuses.add(413)
    else if (fuzz.verdict === "valid") statuses.add(success)
    else {
      statuses.add(400)
      if (fuzz.verdict === "unknown") statuses.add(success)
    }
  }
  const list = [...statuses]
  if (list.length !== 1) return { statuses: list }
  const status = list[0] ?? 0
  if (status === 400 && (fuzz.verdict === "invalid_json" || fuzz.verdict === "invalid_body"))
    return only(400, fuzz.verdict)
  if (status === 400 && fuzz.verdict === "rejected") return only(400, "validation_failed")
  return only(
    status,
    ({ 404: "not_found", 413: "payload_too_large", 415: "unsupported_media_type" } as Record<number, string>)[status]
  )
}

/** The statuses (and code, where fixed) the contract allows for a request Node's parser accepts. */
export const expectedFor = (fixture: FuzzFixture, fuzz: FuzzCase): Expected => {
  const { target } = fuzz
  if (target.kind === "too_long") return only(414, "uri_too_long")
  if (target.kind === "none") return only(404, "not_found")
  if (fuzz.method === "OPTIONS") return only(204)
  const method = fuzz.method === "HEAD" ? "GET" : fuzz.method
  const allowed = ALLOW[target.kind].split(", ").filter((name) => name !== "HEAD" && name !== "OPTIONS")
  if (!allowed.includes(method)) return only(405, "method_not_allowed")
  switch (target.kind) {
    case "health":
    case "openapi":
    case "docs":
      return only(200)
    case "docs_asset":
      return target.exists ? only(200) : only(404, "not_found")
    default:
      break
  }
  switch (fuzz.actor) {
    case "none":
      return only(401, "unauthenticated")
    case "malformed":
    case "unknown":
      return only(401, "invalid_token")
    case "random":
      return only(401)
    case "client":
      if (target.kind !== "plan") return only(403, "insufficient_scope")
      break
    default:
      break
  }
  if (method === "GET") return only(200)
  if (target.kind === "plan") return bodyStage(fuzz, 201, true)
  if (target.kind === "preferences") return bodyStage(fuzz, 200, true)
  if (target.kind === "method") {
    const own = fuzz.actor === "a" ? fixture.a.methods : fuzz.actor === "b" ? fixture.b.methods : []
    return bodyStage(fuzz, own.includes(target.id) ? 200 : 404, false)
  }
  return { statuses: [] }
}

// ---------------------------------------------------------------------------------------------------------------
// Checking a response

/** A stack frame, a source position, or an absolute path on the server: never in a response. */
const INTERNALS =
  /\n\s+at |\bat [\w$.<>]+ \(|\.[cm]?[jt]s:\d+|node_modules|file:\/\/|\/work\/|\/home\/|\/usr\/|[A-Z]:\\/

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const requestText = (fuzz: FuzzCase): string =>
  `${fuzz.path} ${fuzz.authorization ?? ""} ${fuzz.contentType ?? ""} ${fuzz.requestId ?? ""} ${
    fuzz.body === undefined ? "" : typeof fuzz.body === "string" ? fuzz.body : Buffer.from(fuzz.body).toString("latin1")
  }`

const parseBody = (response: RawResponse): unknown => {
  try {
    return JSON.parse(response.body.toString("utf8"))
  } catch {
    return undefined
  }
}

const sameKeys = (value: Record<string, unknown>, keys: ReadonlyArray<string>): boolean =>
  JSON.stringify(Object.keys(value)) === JSON.stringify(keys)

const SUCCESS_TYPES: Readonly<Record<string, string>> = {
  docs: "text/html; charset=utf-8",
  docs_asset: "text/javascript; charset=utf-8"
}
/**
 * The docs page and init.js, whose URLs carry no version, are revalidated rather than not stored (docs/api.md,
 * "Headers on every response"); every other response is `no-store`.
 */
const DOCS_CACHE_CONTROL = "no-cache"
const JSON_TYPE = "application/json; charset=utf-8"
const PROBLEM_TYPE = "application/problem+json; charset=utf-8"
const PREFERENCE_KEYS = ["id", "language", "timezone", "mfa_enabled", "created_at", "updated_at"] as const
const METHOD_KEYS = ["id", "is_default", "created_at", "updated_at"] as const

const isPreferences = (value: unknown): value is Record<(typeof PREFERENCE_KEYS)[number], unknown> =>
  isRecord(value) &&
  sameKeys(value, PREFERENCE_KEYS) &&
  Number.isInteger(value["id"]) &&
  typeof value["language"] === "string" &&
  Number.isInteger(value["timezone"]) &&
  typeof value["mfa_enabled"] === "boolean" &&
  TIMESTAMP_PATTERN.test(String(value["created_at"])) &&
  TIMESTAMP_PATTERN.test(String(value["updated_at"]))

export interface MethodView {
  readonly id: string
  readonly is_default: boolean
  readonly created_at: string
  readonly updated_at: string
}

const isMethodView = (value: unknown): value is MethodView =>
  isRecord(value) &&
  sameKeys(value, METHOD_KEYS) &&
  typeof value["id"] === "string" &&
  typeof value["is_default"] === "boolean" &&
  TIMESTAMP_PATTERN.test(String(value["created_at"])) &&
  TIMESTAMP_PATTERN.test(String(value["updated_at"]))

/** The success body's shape for the target; the list must hold exactly the caller's own methods. */
const successProblems = (
  fixture: FuzzFixture,
  fuzz: FuzzCase,
  status: number,
  body: unknown
): ReadonlyArray<string> => {
  const { target } = fuzz
  switch (target.kind) {
    case "plan":
      return status === 201 &&
        isRecord(body) &&
        sameKeys(body, ["email", "password"]) &&
        typeof body["email"] === "string" &&
        body["password"] === "********"
        ? []
        : ["plan entry: expected 201 {email, password: ********}"]
    case "preferences":
      return isPreferences(body) ? [] : ["preferences: not a preferences record"]
    case "list": {
      const own = fuzz.actor === "a" ? fixture.a.methods : fixture.b.methods
      if (
        !isRecord(body) ||
        !sameKeys(body, ["data"]) ||
        !Array.isArray(body["data"]) ||
        !body["data"].every(isMethodView)
      )
        return ["list: not {data: [PaymentMethod]}"]
      const ids = body["data"].map((method) => method.id)
      const problems: Array<string> = []
      if (JSON.stringify(ids) !== JSON.stringify(own))
        problems.push(`list: ids ${JSON.stringify(ids)}, expected the caller's own ${JSON.stringify(own)}`)
      if (body["data"].filter((method) => method.is_default).length > 1) problems.push("list: more than one default")
      return problems
    }
    case "method":
      return isMethodView(body) && body.id === target.id && body.is_default
        ? []
        : ["set default: expected the method with is_default true"]
    case "health":
      return JSON.stringify(body) === '{"status":"ok"}' ? [] : ["health: expected {status: ok}"]
    case "openapi":
      return isRecord(body) && String(body["openapi"]).startsWith("3.1")
        ? []
        : ["openapi.json: not an OpenAPI 3.1 document"]
    default:
      return []
  }
}

/** RFC 9110 reason phrases, with the statuses Accord adds to the contract's (docs/api.md). */
const TITLES: Readonly<Record<number, string>> = {
  ...reasonPhrases,
  408: "Request Timeout",
  414: "URI Too Long",
  429: "Too Many Requests",
  431: "Request Header Fields Too Large"
}

/** The problem body: exactly the contract's keys, a known code that fits the status, sorted field errors. */
const problemProblems = (status: number, body: unknown): ReadonlyArray<string> => {
  if (!isRecord(body)) return ["problem: body is not a JSON object"]
  const code = body["code"]
  const problems: Array<string> = []
  const withErrors = code === "validation_failed"
  if (!sameKeys(body, ["type", "title", "status", "detail", "code", ...(withErrors ? ["errors"] : [])]))
    problems.push(`problem: keys ${JSON.stringify(Object.keys(body))}`)
  if (body["type"] !== "about:blank") problems.push("problem: type is not about:blank")
  if (body["title"] !== TITLES[status]) problems.push(`problem: title ${String(body["title"])}`)
  if (body["status"] !== status) problems.push("problem: status member differs from the status")
  if (typeof body["detail"] !== "string" || body["detail"] === "") problems.push("problem: empty detail")
  if (typeof code !== "string" || PROBLEM_CODES[code] !== status)
    problems.push(`problem: code ${String(code)} does not belong to ${status}`)
  if (withErrors) {
    const errors = body["errors"]
    if (!Array.isArray(errors) || errors.length === 0) problems.push("problem: validation_failed without errors")
    else {
      const pointers: Array<string> = []
      for (const entry of errors) {
        if (!isRecord(entry) || !sameKeys(entry, ["pointer", "code", "detail"]))
          problems.push("problem: an errors entry is not {pointer, code, detail}")
        else {
          if (typeof entry["pointer"] !== "string" || !entry["pointer"].startsWith("/"))
            problems.push("problem: bad pointer")
          if (!FIELD_CODES.includes(String(entry["code"])))
            problems.push(`problem: field code ${String(entry["code"])}`)
          if (typeof entry["detail"] !== "string" || entry["detail"] === "")
            problems.push("problem: empty field detail")
          pointers.push(String(entry["pointer"]))
        }
      }
      const sorted = [...pointers].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0))
      if (JSON.stringify(sorted) !== JSON.stringify(pointers)) problems.push("problem: errors not sorted by pointer")
    }
  }
  return problems
}

/**
 * Everything the contract says about one response to `fuzz`, as a list of violations (empty: conforming). Checks
 * the status against `expectedFor`, the common headers and the request id, the problem shape, success shapes,
 * that no password of the request and nothing internal shows in the body.
 */
export const checkResponse = (fixture: FuzzFixture, fuzz: FuzzCase, response: RawResponse): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const expected = expectedFor(fixture, fuzz)
  const { status, headers } = response
  const text = response.body.toString("utf8")
  if (!expected.statuses.includes(status))
    problems.push(`status ${status}, expected one of ${expected.statuses.join(", ")}`)
  if (status >= 500) problems.push(`a ${status}`)
  const docsFile = status === 200 && (fuzz.target.kind === "docs" || fuzz.target.kind === "docs_asset")
  const cacheControl = docsFile ? DOCS_CACHE_CONTROL : "no-store"
  if (headers["cache-control"] !== cacheControl) problems.push(`Cache-Control ${String(headers["cache-control"])}`)
  if (headers["x-content-type-options"] !== "nosniff") problems.push("X-Content-Type-Options missing")
  const sentId = fuzz.requestId?.replace(/^[ \t]+|[ \t]+$/g, "")
  const receivedId = headers["x-request-id"] ?? ""
  if (!REQUEST_ID_PATTERN.test(receivedId)) problems.push(`X-Request-Id ${JSON.stringify(receivedId)}`)
  else if (sentId !== undefined && REQUEST_ID_PATTERN.test(sentId) !== (receivedId === sentId))
    problems.push(`X-Request-Id ${receivedId} for ${JSON.stringify(sentId)}`)
  const bodyless = fuzz.method === "HEAD" || status === 204
  if (bodyless && response.body.length > 0) problems.push("a body on HEAD or 204")
  if (status === 204 || status === 405) {
    if (fuzz.target.kind !== "none" && fuzz.target.kind !== "too_long" && headers["allow"] !== ALLOW[fuzz.target.kind])
      problems.push(`Allow ${String(headers["allow"])}`)
  }
  if (status === 204) {
    if (headers["content-type"] !== undefined) problems.push("a Content-Type on 204")
  } else if (status >= 400) {
    if (headers["content-type"] !== PROBLEM_TYPE)
      problems.push(`Content-Type ${String(headers["content-type"])} on an error`)
    if (expected.code !== undefined && !bodyless && !text.includes(`"code":"${expected.code}"`))
      problems.push(`expected code ${expected.code}`)
    if (status === 401) {
      const realm = 'Bearer realm="api"'
      const allowedChallenges =
        fuzz.actor === "none"
          ? [realm]
          : fuzz.actor === "random"
            ? [realm, `${realm}, error="invalid_token"`]
            : [`${realm}, error="invalid_token"`]
      if (!allowedChallenges.includes(headers["www-authenticate"] ?? ""))
        problems.push(`WWW-Authenticate ${String(headers["www-authenticate"])}`)
    }
    if (status === 403 && headers["www-authenticate"] !== 'Bearer realm="api", error="insufficient_scope"')
      problems.push("WWW-Authenticate on 403")
    if (!bodyless) problems.push(...problemProblems(status, parseBody(response)))
  } else {
    const contentType = SUCCESS_TYPES[fuzz.target.kind] ?? JSON_TYPE
    if (headers["content-type"] !== contentType)
      problems.push(`Content-Type ${String(headers["content-type"])} on a success`)
    if (!bodyless && contentType === JSON_TYPE)
      problems.push(...successProblems(fixture, fuzz, status, parseBody(response)))
  }
  for (const password of fuzz.passwords) {
    if (
      [...password].length >= 8 &&
      !/^\**$/.test(password) &&
      (text.includes(password) || text.includes(JSON.stringify(password).slice(1, -1)))
    ) {
      problems.push("the response contains a password of the request")
    }
  }
  const internal = INTERNALS.exec(text)
  if (internal !== null && !requestText(fuzz).includes(internal[0]))
    problems.push(`internal detail in the body: ${JSON.stringify(internal[0])}`)
  return problems
}

// ---------------------------------------------------------------------------------------------------------------
// Sending

export type FuzzResult =
  | { readonly kind: "http"; readonly response: RawResponse }
  /** Everything a raw socket received, and whether the server closed it. */
  | { readonly kind: "wire"; readonly wire: string; readonly closed: boolean }
  | { readonly kind: "error"; readonly message: string }

export const toRawRequest = (fuzz: FuzzCase): RawRequest => {
  const headers: Record<string, string> = {}
  if (fuzz.authorization !== undefined) headers["Authorization"] = fuzz.authorization
  if (fuzz.contentType !== undefined) headers["Content-Type"] = fuzz.contentType
  if (fuzz.requestId !== undefined) headers["X-Request-Id"] = fuzz.requestId
  return fuzz.body === undefined
    ? { method: fuzz.method, path: fuzz.path, headers }
    : { method: fuzz.method, path: fuzz.path, headers, body: fuzz.body }
}

const wireBytes = (fuzz: FuzzCase): Buffer => {
  const lines = [`${fuzz.method} ${fuzz.path} HTTP/1.1`, "Host: fuzz"]
  const request = toRawRequest(fuzz)
  for (const [name, value] of Object.entries(request.headers ?? {})) lines.push(`${name}: ${value}`)
  const body =
    fuzz.body === undefined
      ? undefined
      : typeof fuzz.body === "string"
        ? Buffer.from(fuzz.body, "utf8")
        : Buffer.from(fuzz.body)
  if (body !== undefined) lines.push(`Content-Length: ${body.length}`)
  return Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`, "latin1"), body ?? Buffer.alloc(0)])
}

export const sendFuzzCase = async (baseUrl: string, agent: Agent, fuzz: FuzzCase): Promise<FuzzResult> => {
  if (isWireMethod(fuzz.method)) {
    // The server closes the connection after its answer; the quiet time only bounds a server that never answers.
    const { wire, closed } = await exchange(baseUrl, wireBytes(fuzz), 5000)
    return { kind: "wire", wire, closed }
  }
  try {
    return { kind: "http", response: await send(baseUrl, toRawRequest(fuzz), agent) }
  } catch (error) {
    return { kind: "error", message: error instanceof Error ? error.message : String(error) }
  }
}

/** A response read off a raw socket, as `send` would have given it. */
const parseWire = (wire: string): RawResponse | undefined => {
  const end = wire.indexOf("\r\n\r\n")
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(wire)
  if (end < 0 || status === null) return undefined
  const headers: Record<string, string> = {}
  for (const line of wire.slice(0, end).split("\r\n").slice(1)) {
    const colon = line.indexOf(":")
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim()
  }
  return { status: Number(status[1]), headers, body: Buffer.from(wire.slice(end + 4), "latin1") }
}

/**
 * A request Node's parser refuses never reaches an adapter: the answer is @accord/node's `400 bad_request` problem
 * with the common headers (a new request id: none was read) and `Connection: close`, and the connection closes.
 */
const wireProblems = (result: { readonly wire: string; readonly closed: boolean }): ReadonlyArray<string> => {
  const response = parseWire(result.wire)
  if (response === undefined) return [`not an HTTP response: ${JSON.stringify(result.wire.slice(0, 200))}`]
  const problems: Array<string> = []
  if (response.status !== 400) problems.push(`status ${response.status} for a request Node cannot parse`)
  if (!result.closed || response.headers["connection"] !== "close")
    problems.push("the connection stays open after a parse error")
  if (response.headers["content-type"] !== PROBLEM_TYPE)
    problems.push(`Content-Type ${String(response.headers["content-type"])}`)
  if (response.headers["cache-control"] !== "no-store") problems.push("Cache-Control missing")
  if (response.headers["x-content-type-options"] !== "nosniff") problems.push("X-Content-Type-Options missing")
  if (!REQUEST_ID_PATTERN.test(response.headers["x-request-id"] ?? "")) problems.push("X-Request-Id missing")
  if (Number(response.headers["content-length"]) !== response.body.length)
    problems.push("Content-Length differs from the body")
  const body = parseBody(response)
  problems.push(...problemProblems(400, body))
  if (isRecord(body) && body["code"] !== "bad_request")
    problems.push(`code ${String(body["code"])}, expected bad_request`)
  return problems
}

/** Violations of one result: a wire case must get the parse-error problem, anything else `checkResponse`. */
export const checkResult = (fixture: FuzzFixture, fuzz: FuzzCase, result: FuzzResult): ReadonlyArray<string> => {
  if (result.kind === "error") return [`no response: ${result.message}`]
  if (result.kind === "wire") return wireProblems(result)
  if (isWireMethod(fuzz.method)) return ["a wire case answered over HTTP"]
  return checkResponse(fixture, fuzz, result.response)
}

// ---------------------------------------------------------------------------------------------------------------
// Stored data: only 2xx requests change it

interface MethodModel {
  readonly id: string
  readonly is_default: boolean
  readonly created_at: string
  /** Unknown after the method lost the default (the store picked the time). */
  readonly updated_at: string | undefined
}

/** What a user's data must be: the preferences record and the payment methods, as the API last showed them. */
export interface UserModel {
  preferences: Readonly<Record<string, unknown>>
  methods: ReadonlyArray<MethodModel>
}

export interface FuzzModels {
  readonly a: UserModel
  readonly b: UserModel
}

const getJson = async (baseUrl: string, agent: Agent, path: string, token: string): Promise<unknown> => {
  const response = await send(baseUrl, { method: "GET", path, headers: { Authorization: `Bearer ${token}` } }, agent)
  if (response.status !== 200)
    throw new Error(`GET ${path}: ${response.status} ${response.body.toString("utf8").slice(0, 300)}`)
  return JSON.parse(response.body.toString("utf8"))
}

const readUser = async (
  baseUrl: string,
  agent: Agent,
  user: FuzzUser
): Promise<{ readonly preferences: unknown; readonly list: unknown }> => ({
  preferences: await getJson(baseUrl, agent, paths.preferences, user.token),
  list: await getJson(baseUrl, agent, paths.paymentMethods, user.token)
})

const listOf = (list: unknown): ReadonlyArray<MethodView> | undefined =>
  isRecord(list) && Array.isArray(list["data"]) && list["data"].every(isMethodView) ? list["data"] : undefined

/** Reads both users' data through the API: the model a batch starts from. */
export const snapshotModels = async (baseUrl: string, agent: Agent, fixture: FuzzFixture): Promise<FuzzModels> => {
  const model = async (user: FuzzUser): Promise<UserModel> => {
    const { preferences, list } = await readUser(baseUrl, agent, user)
    const methods = listOf(list)
    if (!isPreferences(preferences) || methods === undefined)
      throw new Error(`snapshot of ${user.id}: unexpected bodies`)
    return { preferences, methods }
  }
  return { a: await model(fixture.a), b: await model(fixture.b) }
}

/** Compares a list the API returned with the model and learns the update times the model did not know. */
const checkList = (model: UserModel, listed: ReadonlyArray<MethodView>, label: string): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const expected = model.methods.map(({ id, is_default, created_at }) => ({ id, is_default, created_at }))
  const actual = listed.map(({ id, is_default, created_at }) => ({ id, is_default, created_at }))
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    problems.push(`${label}: payment methods ${JSON.stringify(actual)}, expected ${JSON.stringify(expected)}`)
  listed.forEach((method, index) => {
    const known = model.methods[index]?.updated_at
    if (known !== undefined && method.updated_at !== known)
      problems.push(`${label}: ${method.id} updated_at changed without a successful request`)
  })
  if (problems.length === 0) model.methods = listed.map((method) => ({ ...method }))
  return problems
}

const PREFERENCE_VALUES = ["language", "timezone", "mfa_enabled"] as const

/**
 * Applies one answered request of `actor`'s lane to its model, in the lane's order, and reports where the API
 * contradicts it: a read that shows a change no 2xx made, a 2xx write that changes what it must not.
 */
const applyToModel = (
  fixture: FuzzFixture,
  model: UserModel,
  fuzz: FuzzCase,
  response: RawResponse
): ReadonlyArray<string> => {
  if (response.status < 200 || response.status > 299 || fuzz.method === "HEAD" || response.status === 204) return []
  const body = parseBody(response)
  const { target } = fuzz
  if (target.kind === "preferences" && isPreferences(body)) {
    const before = model.preferences
    const problems: Array<string> = []
    if (fuzz.method === "GET") {
      if (JSON.stringify(body) !== JSON.stringify(before))
        problems.push(`preferences read ${JSON.stringify(body)}, expected ${JSON.stringify(before)}`)
    } else {
      if (body.id !== before["id"] || body.created_at !== before["created_at"])
        problems.push("preferences: id or created_at changed")
      const changed = PREFERENCE_VALUES.some((name) => body[name] !== before[name])
      if (!changed && body.updated_at !== before["updated_at"])
        problems.push("preferences: updated_at changed though no value did")
      if (changed && String(body.updated_at) < String(before["updated_at"]))
        problems.push("preferences: updated_at went back")
    }
    model.preferences = body
    return problems
  }
  if (target.kind === "list") {
    const listed = listOf(body)
    return listed === undefined ? [] : checkList(model, listed, "list")
  }
  if (target.kind === "method" && isMethodView(body)) {
    const own = fuzz.actor === "a" ? fixture.a.methods : fixture.b.methods
    if (!own.includes(body.id)) return [`set default answered 200 for ${body.id}, which is not the caller's`]
    const current = model.methods.find((method) => method.id === body.id)
    if (current === undefined) return [`set default: ${body.id} is not in the model`]
    const problems: Array<string> = []
    if (current.created_at !== body.created_at) problems.push("set default: created_at changed")
    if (current.is_default && current.updated_at !== undefined && current.updated_at !== body.updated_at)
      problems.push("set default: repeating it changed updated_at")
    model.methods = model.methods.map((method) =>
      method.id === body.id
        ? { ...body }
        : method.is_default
          ? { ...method, is_default: false, updated_at: undefined }
          : method
    )
    return problems
  }
  return []
}

/** The final check of a batch: both users' data read back equals the model. */
export const checkModels = async (
  baseUrl: string,
  agent: Agent,
  fixture: FuzzFixture,
  models: FuzzModels
): Promise<ReadonlyArray<string>> => {
  const problems: Array<string> = []
  for (const [name, user] of [
    ["a", fixture.a],
    ["b", fixture.b]
  ] as const) {
    const model = models[name]
    const { preferences, list } = await readUser(baseUrl, agent, user)
    if (JSON.stringify(preferences) !== JSON.stringify(model.preferences)) {
      problems.push(
        `user ${name}: preferences ${JSON.stringify(preferences)}, expected ${JSON.stringify(model.preferences)}`
      )
    }
    const listed = listOf(list)
    if (listed === undefined) problems.push(`user ${name}: the list is not a list`)
    else problems.push(...checkList(model, listed, `user ${name}`))
  }
  return problems
}

/**
 * Sends a batch: each user's requests in order on a lane of its own (so their effects follow one another, and the
 * model and the answers do not depend on timing), everything else `concurrency` at a time.
 */
export const sendBatch = async (
  baseUrl: string,
  agent: Agent,
  cases: ReadonlyArray<FuzzCase>,
  concurrency: number
): Promise<ReadonlyArray<FuzzResult>> => {
  const results: Array<FuzzResult> = cases.map(() => ({ kind: "error", message: "not sent" }))
  const lanes: Record<"a" | "b" | "free", Array<number>> = { a: [], b: [], free: [] }
  cases.forEach((fuzz, index) =>
    (fuzz.actor === "a" || fuzz.actor === "b" ? lanes[fuzz.actor] : lanes.free).push(index)
  )
  const sendAt = async (index: number) => {
    const fuzz = cases[index]
    if (fuzz !== undefined) results[index] = await sendFuzzCase(baseUrl, agent, fuzz)
  }
  const inOrder = async (indices: ReadonlyArray<number>) => {
    for (const index of indices) await sendAt(index)
  }
  let next = 0
  const worker = async () => {
    while (next < lanes.free.length) await sendAt(lanes.free[next++] ?? -1)
  }
  await Promise.all([
    inOrder(lanes.a),
    inOrder(lanes.b),
    ...Array.from({ length: Math.max(1, concurrency - 2) }, worker)
  ])
  return results
}

export interface BatchOutcome {
  readonly results: ReadonlyArray<FuzzResult>
  /** Every violation, each prefixed with the index of its case. */
  readonly problems: ReadonlyArray<string>
}

/**
 * Sends `cases` to one server and checks every answer, then both users' stored data against the model the 2xx
 * answers built from `models` (mutated to the new state), then that health still answers 200.
 */
export const runFuzzBatch = async (
  baseUrl: string,
  agent: Agent,
  fixture: FuzzFixture,
  models: FuzzModels,
  cases: ReadonlyArray<FuzzCase>,
  concurrency: number
): Promise<BatchOutcome> => {
  const results = await sendBatch(baseUrl, agent, cases, concurrency)
  const problems: Array<string> = []
  results.forEach((result, index) => {
    const fuzz = cases[index]
    if (fuzz === undefined) return
    for (const problem of checkResult(fixture, fuzz, result)) problems.push(`#${index}: ${problem}`)
    if ((fuzz.actor === "a" || fuzz.actor === "b") && result.kind === "http") {
      for (const problem of applyToModel(fixture, models[fuzz.actor], fuzz, result.response))
        problems.push(`#${index}: ${problem}`)
    }
  })
  problems.push(...(await checkModels(baseUrl, agent, fixture, models)))
  try {
    const health = await send(baseUrl, { method: "GET", path: paths.health }, agent)
    if (health.status !== 200) problems.push(`health after the batch: ${health.status}`)
  } catch (error) {
    problems.push(`health after the batch: ${error instanceof Error ? error.message : String(error)}`)
  }
  return { results, problems }
}

/** A result reduced to what both adapters must answer alike (parity.ts's `comparable`; wire answers as they are). */
export const comparableResult = (fuzz: FuzzCase, index: number, result: FuzzResult): ComparableResponse | string => {
  if (result.kind === "http") return comparable({ name: `#${index}`, request: toRawRequest(fuzz) }, result.response)
  // Date and the (always new) request id are the only values that may differ.
  if (result.kind === "wire")
    return `#${index} wire ${result.closed ? "closed" : "open"}: ${result.wire.replace(/^(Date|x-request-id): .*\r\n/gim, "")}`
  return `#${index} no response`
}

/** A short description of a case for failure messages. */
export const describeCase = (fuzz: FuzzCase): string => {
  const body =
    fuzz.body === undefined
      ? "no body"
      : typeof fuzz.body === "string"
        ? JSON.stringify(fuzz.body.slice(0, 200))
        : `bytes ${Buffer.from(fuzz.body.slice(0, 100)).toString("hex")}`
  return `${fuzz.method.slice(0, 40)} ${fuzz.path.slice(0, 120)} actor=${fuzz.actor} authorization=${JSON.stringify(fuzz.authorization?.slice(0, 80))} content-type=${JSON.stringify(fuzz.contentType)} verdict=${fuzz.verdict} request-id=${JSON.stringify(fuzz.requestId?.slice(0, 40))} body(${bodyLength(fuzz.body)} bytes)=${body}`
}

export const keepAliveAgent = (sockets: number): Agent => new Agent({ keepAlive: true, maxSockets: sockets })

// ---------------------------------------------------------------------------------------------------------------
// The suite

/** The default seed: fixed, so CI is reproducible; FUZZ_SEED overrides it. */
export const DEFAULT_FUZZ_SEED = 20_261_121
/** Runs of `DEFAULT_FUZZ_BATCH` requests each: 5000 requests per server; FUZZ_RUNS overrides it. */
export const DEFAULT_FUZZ_RUNS = 200
export const DEFAULT_FUZZ_BATCH = 25

export interface HttpFuzzOptions {
  /** Default: FUZZ_SEED, else DEFAULT_FUZZ_SEED. */
  readonly seed?: number
  /** fast-check runs, each a batch of `batchSize` requests. Default: FUZZ_RUNS, else DEFAULT_FUZZ_RUNS. */
  readonly numRuns?: number
  readonly batchSize?: number
  /** Requests in flight per server (each user's lane counts one). Default 8. */
  readonly concurrency?: number
}

const fromEnv = (name: string): number | undefined => {
  const value = process.env[name]
  if (value === undefined || value.trim() === "") return undefined
  const number = Number(value)
  if (!Number.isSafeInteger(number)) throw new Error(`${name} must be an integer, got ${JSON.stringify(value)}`)
  return number
}

export interface FuzzSettings {
  readonly seed: number
  readonly numRuns: number
  readonly batchSize: number
  readonly concurrency: number
}

export const fuzzSettings = (options: HttpFuzzOptions = {}): FuzzSettings => ({
  seed: options.seed ?? fromEnv("FUZZ_SEED") ?? DEFAULT_FUZZ_SEED,
  numRuns: options.numRuns ?? fromEnv("FUZZ_RUNS") ?? DEFAULT_FUZZ_RUNS,
  batchSize: options.batchSize ?? DEFAULT_FUZZ_BATCH,
  concurrency: options.concurrency ?? 8
})

interface Running {
  readonly name: string
  readonly server: RunningServer
  readonly agent: Agent
  models: FuzzModels | undefined
  sent: number
}

/**
 * The fuzz as a vitest suite: every server in `servers` (name and a `StartServer`, e.g. `startWith(startKoaServer)`)
 * gets the same generated batches on a fresh store of its own; each answer must conform (`checkResult`), each
 * server's stored data may change only through 2xx answers, health must stay 200, and with two or more servers
 * every answer must equal the first server's (status, contract headers, request-id behaviour, body). Prints the
 * seed; replay a failure with FUZZ_SEED (and the path fast-check prints).
 */
export const runHttpFuzz = (
  suite: string,
  servers: ReadonlyArray<readonly [name: string, start: StartServer]>,
  options: HttpFuzzOptions = {}
): void => {
  const settings = fuzzSettings(options)
  const fixture = makeFuzzFixture(`fuzz-${settings.seed}`)

  describe(`HTTP fuzz: ${suite}`, () => {
    const running: Array<Running> = []
    beforeAll(async () => {
      for (const [name, start] of servers) {
        const server = await start(fixture.seed)
        running.push({ name, server, agent: keepAliveAgent(settings.concurrency), models: undefined, sent: 0 })
      }
    })
    afterAll(async () => {
      for (const { server, agent } of running) {
        agent.destroy()
        await server.close()
      }
    })

    const requests = settings.numRuns * settings.batchSize
    it(
      `${requests} generated requests per server conform, change stored data only by 2xx, and answer alike (seed ${settings.seed})`,
      async () => {
        // The seed is what replays a failure.
        console.info(
          `[fuzz] ${suite}: seed ${settings.seed}, ${settings.numRuns} runs of ${settings.batchSize} requests per server (FUZZ_SEED, FUZZ_RUNS)`
        )
        const started = performance.now()
        const property = fc.asyncProperty(
          fc.array(fuzzCase(fixture), { minLength: settings.batchSize, maxLength: settings.batchSize }),
          async (cases) => {
            const outcomes = await Promise.all(
              running.map(async (target) => {
                // After a failed run the model may be behind: read it again.
                target.models ??= await snapshotModels(target.server.url, target.agent, fixture)
                const models = target.models
                target.models = undefined
                const outcome = await runFuzzBatch(
                  target.server.url,
                  target.agent,
                  fixture,
                  models,
                  cases,
                  settings.concurrency
                )
                target.sent += cases.length
                if (outcome.problems.length === 0) target.models = models
                return outcome
              })
            )
            const problems: Array<string> = []
            outcomes.forEach((outcome, index) =>
              problems.push(...outcome.problems.map((problem) => `${running[index]?.name}: ${problem}`))
            )
            const reference = outcomes[0]
            outcomes.slice(1).forEach((outcome, index) => {
              cases.forEach((fuzz, at) => {
                const expected = reference?.results[at]
                const actual = outcome.results[at]
                if (expected === undefined || actual === undefined) return
                const a = comparableResult(fuzz, at, expected)
                const b = comparableResult(fuzz, at, actual)
                if (JSON.stringify(a) !== JSON.stringify(b)) {
                  problems.push(
                    `parity ${running[0]?.name} / ${running[index + 1]?.name}: ${JSON.stringify(a)} versus ${JSON.stringify(b)}`
                  )
                }
              })
            })
            if (problems.length > 0) {
              const cited = new Set(
                problems.flatMap((problem) => [...problem.matchAll(/#(\d+)/g)].map((match) => Number(match[1])))
              )
              const described = [...cited]
                .sort((x, y) => x - y)
                .map((index) => `  #${index}: ${describeCase(cases[index] as FuzzCase)}`)
              throw new Error(`${problems.slice(0, 20).join("\n")}\ncases:\n${described.join("\n")}`)
            }
          }
        )
        await fc.assert(property, { seed: settings.seed, numRuns: settings.numRuns })
        console.info(
          `[fuzz] ${suite}: ${running.map((target) => `${target.name} ${target.sent}`).join(", ")} requests in ${Math.round(performance.now() - started)} ms`
        )
        for (const target of running)
          expect(target.sent, `${target.name}: requests sent`).toBeGreaterThanOrEqual(requests)
      },
      Math.max(120_000, settings.numRuns * 2_000)
    )
  })
}
