import type { SeedInput } from "@accord/domain"
import fc from "fast-check"
import { createHash } from "node:crypto"
import { METHODS } from "node:http"
import { paths, withoutSlash } from "@accord/conformance"

/**
 * The fuzz's generators: `fuzzCase(fixture)` makes hostile requests (methods, path variants, credentials, media
 * types, bodies, request ids), each aimed at one operation or at none, with what its body is for that operation
 * (`verdict`). What the contract allows for each is the oracle's (oracle.ts); sending them is the runner's.
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
type Actor =
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
type BodyVerdict = "valid" | "invalid_json" | "invalid_body" | "rejected" | "unknown"

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

/** The body's size in bytes, as the contract counts it (docs/api.md, "Precise rules"). */
export const bodyLength = (body: FuzzCase["body"]): number =>
  body === undefined ? 0 : typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.length
