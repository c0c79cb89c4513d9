import type { SeedInput } from "@accord/domain"
import fc from "fast-check"
import { createHash } from "node:crypto"
import { METHODS } from "node:http"
import { operationPath, withoutSlash } from "@accord/conformance"
import {
  DOCS_FILES,
  DOCUMENTS,
  docsOf,
  fieldsOf,
  idsOwnedBy,
  isRecord,
  MAX_PATH_LENGTH,
  PREFIX,
  ROUTES,
  secretFieldsOf,
  type ContractOperation,
  type FuzzRoute
} from "./targets.js"

/**
 * The fuzz's generators: `fuzzCase(fixture)` makes hostile requests (methods, paths, credentials, media types,
 * transfer codings, bodies, request ids). Their targets are the contract's routes (targets.ts), each path parameter
 * filled from the fixture, and each body made from its operation's Schema (its fields) and docs (its examples), mixed
 * with hostile values and mutations. A case says what its body's JSON text is (`syntax`), never what the contract
 * answers: that is the oracle's (oracle.ts), and sending them the runner's.
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

/**
 * What a non-empty body's text is as JSON, as it was built: an object (its fields then decide), invalid JSON (syntax,
 * UTF-8, a byte-order mark, a duplicate or prototype key, too deep), JSON that is not an object, or unknown (random
 * bytes, a cut that may parse). What the operation makes of an object is the oracle's: it decodes it with the body
 * Schema.
 */
export type BodySyntax = "object" | "invalid_json" | "invalid_body" | "unknown"

export interface FuzzCase {
  /** Methods Node's parser does not know (lower-case, unknown, long) go on a raw socket: see `isWireMethod`. */
  readonly method: string
  readonly path: string
  readonly actor: Actor
  readonly authorization: string | undefined
  readonly contentType: string | undefined
  /** Whether the contract takes `contentType` as JSON; undefined for random text. */
  readonly json: boolean | undefined
  readonly body: string | Uint8Array | undefined
  /**
   * How the body is framed: undefined for `Content-Length` (none without a body), else the Transfer-Encoding sent,
   * the body then chunked (`chunked` alone on a pooled connection, any other value on a raw socket).
   */
  readonly transferEncoding: string | undefined
  readonly syntax: BodySyntax
  readonly requestId: string | undefined
  /** Values of the body's secret fields (a password): no response may contain any of them. */
  readonly secrets: ReadonlyArray<string>
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

/** The same text with every character as a \u escape: the same string to a JSON reader. */
const escaped = (text: string): string =>
  `"${[...text].map((char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`).join("")}"`

const writeJson = (value: Json, gap: string): string => {
  if ("raw" in value) return value.raw
  if ("items" in value) return `[${value.items.map((item) => writeJson(item, gap)).join(`,${gap}`)}]`
  return `{${gap}${value.entries.map(([name, item]) => `${name}${gap}:${gap}${writeJson(item, gap)}`).join(`,${gap}`)}${gap}}`
}

const FORBIDDEN_KEYS = ["__proto__", "constructor", "prototype"] as const

const isForbidden = (name: string): boolean => (FORBIDDEN_KEYS as ReadonlyArray<string>).includes(name)

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
          fc.string({ maxLength: 8 }).filter((name) => !isForbidden(name)),
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

const wrongTypeArb: fc.Arbitrary<Json> = fc
  .constantFrom("null", "true", "false", "1", "-1.5", '""', '"x"', "[]", "{}", '[1,"a"]', '{"k":1}')
  .map(raw)

/** A value of any type and shape: what a field gets when the fuzz ignores what it is for. */
const hostileValueArb: fc.Arbitrary<Json> = fc.oneof(wrongTypeArb, scalarArb, cleanJsonArb)

/**
 * Values near an example's: itself, and what a careless client or reader of its JSON type would make of it (other
 * case, padding, boundary lengths, other spellings of the same number, off by one, out of range, another type).
 */
const variantsOf = (value: unknown): ReadonlyArray<Json> => {
  if (typeof value === "string")
    return [
      str(value),
      raw(escaped(value)),
      str(value.toUpperCase()),
      str(value.toLowerCase()),
      str(` ${value} `),
      str(`\t${value}`),
      str(""),
      str(value.slice(0, 1)),
      str(value.slice(0, -1)),
      str(`${value}\ud800`),
      str(`${value}\u0000`),
      ...lengths.map((length) => str(value.padEnd(length, "x")))
    ]
  if (typeof value === "number") {
    const spellings = Number.isInteger(value) ? [`${value}.0`, `${value / 10}e1`, `${value}E0`] : [`${value}e0`]
    return [
      ...[value, value + 1, value - 1, -value, value * 2, value + 0.5].map((n) => raw(String(n))),
      ...spellings.map(raw),
      ...["1e400", "-1e400", "9007199254740993"].map(raw),
      str(String(value))
    ]
  }
  if (typeof value === "boolean")
    return [raw(String(value)), raw(String(!value)), str(String(value)), raw(value ? "1" : "0"), raw("null")]
  return [raw(JSON.stringify(value)), raw("null"), raw("{}"), raw("[]")]
}

/** Secrets carry a marker so that a response containing one cannot be a coincidence. */
const SECRET_MARK = "Pw#"

/**
 * Values no docs example shows that earlier runs of the fuzz found worth sending, by field name: optional seasoning.
 * A field without an entry (any new operation's) is fuzzed from its examples, their variants and hostile values.
 */
const MORE_VALUES: Readonly<Record<string, fc.Arbitrary<Json>>> = {
  email: fc.oneof(
    fc
      .tuple(
        fc.constantFrom("", " ", "\t"),
        fc.stringMatching(/^[a-z0-9]{1,12}$/),
        fc.constantFrom("", "+tag", ".o'neil"),
        fc.constantFrom("Example.COM", "example.org", "sub.Domain.io", "x-y.example")
      )
      .map(([pad, local, extra, domain]) => str(`${pad}${local}${extra}@${domain}${pad}`)),
    fc
      .constantFrom(
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
        "a@example.com.",
        // A 65-character local part; 255 characters in all, with every label within 63.
        `${"a".repeat(65)}@example.com`,
        `a@${"b".repeat(63)}.${"c".repeat(63)}.${"d".repeat(63)}.${"e".repeat(61)}`
      )
      .map(str),
    fc.emailAddress().map(str)
  ),
  password: fc.oneof(
    fc.string({ unit: "grapheme-ascii", minLength: 5, maxLength: 40 }).map((rest) => str(SECRET_MARK + rest)),
    fc.string({ unit: "binary", maxLength: 40 }).map((rest) => str(SECRET_MARK + rest)),
    fc
      .constantFrom(
        "😀".repeat(8),
        "é".repeat(128),
        `${SECRET_MARK}${"x".repeat(125)}`,
        "short12",
        `${SECRET_MARK}${"x".repeat(126)}`,
        "😀".repeat(129),
        `${SECRET_MARK}é`
      )
      .map(str)
  ),
  language: fc
    .constantFrom(
      ...["en", "fr", "EN-us", "iw", "pt-BR", "zh-Hant-TW", "de-CH-1996", "sr-Latn"],
      ...["en_US", "x".repeat(36), "123", "en-", "-en", "e"]
    )
    .map(str),
  timezone: fc
    .constantFrom(
      ...["0", "60", "60.0", "-720", "840", "330", "-15", "6e1", "1.5e2", "15.0"],
      ...["61", "855", "-735", "30.5", '"60"', "900", "-721", "7.5", "1e308"]
    )
    .map(raw)
}

/**
 * What the fuzz sends in one field of a body: mostly the operation's request example (a value it accepts), also its
 * validation example (one it refuses), their variants, the seasoning, and hostile values.
 */
const fieldValueArb = (name: string, accepted: unknown, refused: unknown): fc.Arbitrary<Json> => {
  const examples = [accepted, refused].filter((value) => value !== undefined)
  const more = MORE_VALUES[name]
  const choices: Array<fc.WeightedArbitrary<Json>> = [{ weight: 2, arbitrary: hostileValueArb }]
  if (accepted !== undefined) choices.push({ weight: 10, arbitrary: fc.constant(raw(JSON.stringify(accepted))) })
  if (refused !== undefined) choices.push({ weight: 2, arbitrary: fc.constant(raw(JSON.stringify(refused))) })
  if (examples.length > 0) choices.push({ weight: 4, arbitrary: fc.constantFrom(...examples.flatMap(variantsOf)) })
  if (more !== undefined) choices.push({ weight: 4, arbitrary: more })
  if (examples.length === 0 && more === undefined) choices.push({ weight: 4, arbitrary: cleanJsonArb })
  return fc.oneof(...choices)
}

interface BodyChoice {
  readonly body: string | Uint8Array | undefined
  readonly syntax: BodySyntax
  readonly secrets: ReadonlyArray<string>
}

/** Names of no field: near misses of the body's own (case, spacing, spelling) and random ones. */
const unknownNameArb = (known: ReadonlyArray<string>): fc.Arbitrary<string> => {
  const nearMisses = [
    ...known.flatMap((name) => [
      name.charAt(0).toUpperCase() + name.slice(1),
      `${name} `,
      name.replaceAll("_", ""),
      name.replace(/_(.)/g, (_, next: string) => next.toUpperCase()),
      `${name}_confirmation`
    ]),
    "user_id",
    "id",
    "name",
    "default"
  ].filter((name) => !known.includes(name))
  return fc.oneof(
    fc.constantFrom(...nearMisses),
    fc.string({ maxLength: 12 }).filter((name) => !known.includes(name) && !isForbidden(name))
  )
}

/** Something done to a well-formed body, with what it makes of its syntax. */
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
 * A JSON object body for an operation, from its body Schema's fields (`fieldsOf`) and its docs' examples: each field
 * absent or given a value (`fieldValueArb`), maybe unknown fields, then maybe one mutation. Its syntax follows from what
 * was put in; the values of its secret fields are listed.
 */
const objectBodyArb = (operation: ContractOperation): fc.Arbitrary<BodyChoice> => {
  const schema = operation.body?.schema
  const fields = schema === undefined ? [] : fieldsOf(schema)
  const secretFields = schema === undefined ? [] : secretFieldsOf(schema)
  const docs = docsOf(operation)
  const accepted = isRecord(docs.requestExample) ? docs.requestExample : {}
  const refused = isRecord(docs.validationExample?.request) ? docs.validationExample.request : {}
  const published = [...Object.values(accepted), ...Object.values(refused)]
  return fc
    .record({
      values: fc.tuple(
        ...fields.map((name) =>
          fc.option(fieldValueArb(name, accepted[name], refused[name]), { freq: 6, nil: undefined })
        )
      ),
      unknown: fc.oneof(
        { weight: 5, arbitrary: fc.constant<ReadonlyArray<Entry>>([]) },
        {
          weight: 1,
          arbitrary: fc.array(fc.tuple(unknownNameArb(fields).map(key), cleanJsonArb), { minLength: 1, maxLength: 2 })
        }
      ),
      mutation: mutationArb,
      gap: gapArb,
      shuffle: fc.boolean()
    })
    .map(({ values, unknown, mutation, gap, shuffle }): BodyChoice => {
      const entries: Array<Entry> = []
      const secrets: Array<string> = []
      let syntax: BodySyntax = "object"
      values.forEach((value, index) => {
        const name = fields[index]
        if (name === undefined || value === undefined) return
        const sent: unknown = "raw" in value && value.raw.startsWith('"') ? JSON.parse(value.raw) : undefined
        // A docs example is published (the OpenAPI document shows it): no secret.
        if (secretFields.includes(name) && typeof sent === "string" && !published.includes(sent)) secrets.push(sent)
        entries.push([key(name), value])
      })
      // An unknown name may repeat another unknown's: that is a duplicate key, invalid JSON for sure.
      const names = new Set(entries.map(([name]) => JSON.parse(name) as string))
      for (const entry of unknown) {
        const name = JSON.parse(entry[0]) as string
        if (names.has(name)) syntax = "invalid_json"
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
          entries.push([mutation.kind === "duplicate" ? entry[0] : escaped(name), entry[1]])
          syntax = "invalid_json"
          break
        }
        case "escaped_name": {
          const index = mutation.index % Math.max(entries.length, 1)
          const entry = entries[index]
          if (entry !== undefined) entries[index] = [escaped(JSON.parse(entry[0]) as string), entry[1]]
          break
        }
        case "forbidden": {
          const name = mutation.escaped ? escaped(mutation.name) : key(mutation.name)
          entries.push(
            mutation.nested
              ? [key("nested"), { items: [{ entries: [[name, raw("1")]] }] }]
              : [name, { entries: [[key(fields[0] ?? "x"), raw("true")]] }]
          )
          syntax = "invalid_json"
          break
        }
        case "deep": {
          // The body is level 1, so a value of `depth - 1` levels makes `depth` in all: under a field the body does
          // not have yet (what the field makes of it is the Schema's), else under a name of no field.
          const name = fields.find((candidate) => !names.has(candidate)) ?? "deep_field"
          const duplicate = names.has(name)
          entries.push([key(name), raw(nested(mutation.depth - 1, mutation.objects))])
          if (mutation.depth > 32 || duplicate) syntax = "invalid_json"
          break
        }
        default:
          break
      }
      let text = writeJson({ entries }, gap)
      if (mutation.kind === "truncate") {
        text = text.slice(0, mutation.at % Math.max(text.length, 1))
        // A cut that still parses is rare (a cut inside trailing whitespace); the oracle judges what was sent.
        syntax = parses(text) ? "unknown" : "invalid_json"
      } else if (mutation.kind === "trailing") {
        text += mutation.text
        syntax = "invalid_json"
      }
      return { body: text, syntax, secrets }
    })
}

const bytes = (...parts: ReadonlyArray<string | ReadonlyArray<number>>): Uint8Array =>
  Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part, "utf8") : Buffer.from(part))))

/** Bodies made without any operation in mind. */
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
        syntax: "invalid_body",
        secrets: []
      }))
    ),
  fc.uint8Array({ minLength: 1, maxLength: 64 }).map((body): BodyChoice => ({ body, syntax: "unknown", secrets: [] })),
  fc
    .string({ unit: "binary", minLength: 1, maxLength: 64 })
    .map((body): BodyChoice => ({ body, syntax: "unknown", secrets: [] })),
  fc
    .constantFrom<ReadonlyArray<number>>(
      [0xff],
      [0xc0, 0x80],
      [0xed, 0xa0, 0x80],
      [0xe2, 0x82],
      [0xf5, 0x80, 0x80, 0x80],
      [0xfe]
    )
    .map((invalid): BodyChoice => ({ body: bytes('{"x":"', invalid, '"}'), syntax: "invalid_json", secrets: [] })),
  fc
    .constantFrom("{}", '{"id":1}', "[]")
    .map((text): BodyChoice => ({ body: bytes([0xef, 0xbb, 0xbf], text), syntax: "invalid_json", secrets: [] })),
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
    .map((text): BodyChoice => ({ body: text, syntax: "invalid_json", secrets: [] })),
  // Around the limit: 413 past it, else an object whose one field the operation's Schema judges.
  fc
    .constantFrom(16_383, 16_384, 16_385, 20_000, 40_000)
    .map((size): BodyChoice => ({ body: `{"id":"${"x".repeat(size - 9)}"}`, syntax: "object", secrets: [] }))
)

/** No body at all, or an empty one (`Content-Length: 0`, or an empty chunked body). */
const noBodyArb: fc.Arbitrary<BodyChoice> = fc.constantFrom<BodyChoice>(
  { body: undefined, syntax: "unknown", secrets: [] },
  { body: "", syntax: "unknown", secrets: [] }
)

/** An operation's bodies: mostly objects made from its Schema and examples, some junk, some none. */
const operationBodyArb = (operation: ContractOperation): fc.Arbitrary<BodyChoice> =>
  fc.oneof(
    { weight: 12, arbitrary: objectBodyArb(operation) },
    { weight: 3, arbitrary: junkBodyArb },
    { weight: 1, arbitrary: noBodyArb }
  )

const BODY_OPERATIONS: ReadonlyArray<ContractOperation> = ROUTES.flatMap((route) =>
  route.operations.filter((operation) => operation.body !== undefined)
)

/** Any body: any operation's, junk, or none (for a request whose operation reads none). */
const anyBodyArb: fc.Arbitrary<BodyChoice> = fc.oneof(...BODY_OPERATIONS.map(operationBodyArb), junkBodyArb)

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

/**
 * Mostly `Content-Length`; some chunked, a few in another case or with a coding before chunked (501 where a body is
 * read). Those few go on a raw socket each, a connection of their own: rare, so that the run stays fast.
 */
const transferEncodingArb: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 120, arbitrary: fc.constant(undefined) },
  { weight: 4, arbitrary: fc.constant("chunked") },
  { weight: 1, arbitrary: fc.constantFrom("Chunked", "CHUNKED") },
  {
    weight: 1,
    arbitrary: fc.constantFrom("gzip, chunked", "deflate, chunked", "identity, chunked", "br,chunked", "x-zip, chunked")
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

// ---------------------------------------------------------------------------------------------------------------
// Paths

const querySuffixArb = fc.oneof(
  fc.constantFrom("?", "?a=1&b", "#frag", "?x=%zz", `?${"q".repeat(3000)}`),
  fc.stringMatching(/^\?[A-Za-z0-9=&%._~-]{0,40}$/)
)

/** The path as given, or without its trailing slash (a route that is not exact), maybe with a query or a fragment. */
const decorated = (path: string, slashOptional: boolean): fc.Arbitrary<string> => {
  const forms = slashOptional && path.endsWith("/") ? [path, withoutSlash(path)] : [path]
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...forms) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom(...forms), querySuffixArb).map(([form, query]) => form + query) }
  )
}

const percentEncoded = (id: string): string =>
  [...Buffer.from(id, "utf8")].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("")

/** Segments no id is made of: other characters, escapes (malformed ones too), dot segments, over any length. */
const ODD_SEGMENTS = [
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
] as const

/** The operation that names the route's path (any: they share it). */
const firstOf = (route: FuzzRoute): ContractOperation => {
  const [first] = route.operations
  if (first === undefined) throw new Error(`the route ${route.path} has no operation`)
  return first
}

/** The route's path under the prefix with each parameter given its value, sent as is. */
const filled = (route: FuzzRoute, values: Readonly<Record<string, string>>): string =>
  operationPath(PREFIX, firstOf(route).operationId, values)

/** The names of the route's path parameters: the fields of its parameters' Schema, one per `{name}`. */
const parameterNames = (route: FuzzRoute): ReadonlyArray<string> =>
  Object.keys(route.operations.find((operation) => operation.params !== undefined)?.params?.fields ?? {})

/** The example of a path parameter in the docs of the route's operations. */
const parameterExample = (route: FuzzRoute, name: string): string | undefined =>
  route.operations.map((operation) => docsOf(operation).params?.[name]?.example).find((value) => value !== undefined)

/**
 * A value for a path parameter, made from the fixture: mostly an id of the caller's own records, also another user's,
 * the docs' example, one percent-encoded, an unknown one, and segments no id is made of. Which of them the parameter's
 * Schema accepts, and what the use case answers, is the oracle's to say.
 */
const parameterValueArb = (fixture: FuzzFixture, caller: FuzzUser | undefined, example: string | undefined) => {
  const users = [fixture.a, fixture.b]
  // A caller who is no user owns nothing: the first user's ids are then the ones most worth trying.
  const owner = caller ?? fixture.a
  const own = idsOwnedBy(fixture.seed, owner.id)
  const others = users.filter((user) => user !== owner).flatMap((user) => idsOwnedBy(fixture.seed, user.id))
  const known = users.flatMap((user) => idsOwnedBy(fixture.seed, user.id))
  const choices: Array<fc.WeightedArbitrary<string>> = [
    {
      weight: 1,
      arbitrary: fc.oneof(
        fc.stringMatching(/^[A-Za-z0-9_-]{1,20}$/).filter((id) => !known.includes(id)),
        fc.constantFrom("z".repeat(100))
      )
    },
    { weight: 1, arbitrary: fc.constantFrom(...ODD_SEGMENTS) }
  ]
  if (own.length > 0)
    choices.push(
      { weight: 6, arbitrary: fc.constantFrom(...own) },
      { weight: 1, arbitrary: fc.constantFrom(...own).map(percentEncoded) }
    )
  if (others.length > 0) choices.push({ weight: 2, arbitrary: fc.constantFrom(...others) })
  if (example !== undefined) choices.push({ weight: 1, arbitrary: fc.constant(example) })
  return fc.oneof(...choices)
}

/** A path of `route`, each parameter filled for `caller` (a user, or undefined for anyone else). */
const routePathArb = (fixture: FuzzFixture, route: FuzzRoute, caller: FuzzUser | undefined): fc.Arbitrary<string> => {
  const names = parameterNames(route)
  return fc
    .tuple(...names.map((name) => parameterValueArb(fixture, caller, parameterExample(route, name))))
    .chain((values) =>
      decorated(
        filled(route, Object.fromEntries(names.map((name, index) => [name, values[index] ?? ""]))),
        !route.exact
      )
    )
}

/** Each document's path: the reference page's files it has (`DOCS_FILES`), and one it has not. */
const DOCUMENT_PATHS: ReadonlyArray<string> = DOCUMENTS.flatMap(({ path }) =>
  path.includes("{asset}")
    ? [...Object.keys(DOCS_FILES), "nope.js"].map((file) => PREFIX + path.replace("{asset}", file))
    : [PREFIX + path]
)

const documentPathArb: fc.Arbitrary<string> = fc.constantFrom(...DOCUMENT_PATHS).chain((path) => decorated(path, false))

/**
 * Paths near a known one: another case, a slash more or less, an extra or a missing segment, a letter percent-encoded,
 * dot segments, another prefix or none. Most name no route (404); the oracle finds the ones that do.
 */
const nearMissesOf = (path: string): ReadonlyArray<string> => {
  const bare = withoutSlash(path)
  const relative = path.slice(PREFIX.length)
  const last = bare.lastIndexOf("/")
  return [
    `${bare}//`,
    `${bare}/x/`,
    `${path}/`,
    bare.toUpperCase(),
    bare.slice(0, last + 1) + bare.charAt(last + 1).toUpperCase() + bare.slice(last + 2),
    bare.slice(0, last + 1) + percentEncoded(bare.charAt(last + 1)) + bare.slice(last + 2),
    bare.slice(0, last + 1),
    `${bare}%2F`,
    `${PREFIX}x${relative}`,
    `${PREFIX}/${relative}`,
    `${PREFIX}/.${relative}`,
    `${PREFIX}/..${PREFIX}${relative}`,
    relative
  ]
}

/** Paths no route was written for, most of them near one that was. */
const NEAR_MISSES: ReadonlyArray<string> = [
  ...new Set([
    ...ROUTES.flatMap((route) =>
      nearMissesOf(filled(route, Object.fromEntries(parameterNames(route).map((name) => [name, "x"]))))
    ),
    ...DOCUMENT_PATHS.flatMap(nearMissesOf),
    "/",
    PREFIX,
    `${PREFIX}/`,
    `${PREFIX}/nope`,
    "/favicon.ico",
    "*"
  ])
]

const unknownPathArb: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...NEAR_MISSES),
  fc.webSegment().map((segment) => `/${segment}`),
  fc.webSegment().map((segment) => `${PREFIX}/${segment}`)
)

/** Paths over the limit: under the prefix, in a route, or elsewhere. */
const tooLongPathArb: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(`${PREFIX}/`, ...ROUTES.map((route) => PREFIX + (route.path.split("{")[0] ?? "")), "/elsewhere/"),
    fc.integer({ min: MAX_PATH_LENGTH + 1, max: MAX_PATH_LENGTH + 1000 })
  )
  .map(([start, length]) => start + "a".repeat(length - start.length))

/** Any path: a route's (for any caller), a document's, a near miss, one too long. */
const anyPathArb = (fixture: FuzzFixture): fc.Arbitrary<string> =>
  fc.oneof(
    {
      weight: ROUTES.length,
      arbitrary: fc.constantFrom(...ROUTES).chain((route) => routePathArb(fixture, route, undefined))
    },
    { weight: 2, arbitrary: documentPathArb },
    { weight: 3, arbitrary: unknownPathArb },
    { weight: 1, arbitrary: tooLongPathArb }
  )

// ---------------------------------------------------------------------------------------------------------------
// Methods, and the cases

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
  readonly credential: fc.Arbitrary<CredentialChoice>
  /** The path, for the caller the credential names. */
  readonly path: (actor: Actor) => fc.Arbitrary<string>
  readonly body: fc.Arbitrary<BodyChoice>
}): fc.Arbitrary<FuzzCase> =>
  fc
    .record({
      method: parts.method,
      credential: parts.credential,
      contentType: contentTypeArb,
      transferEncoding: transferEncodingArb,
      body: parts.body,
      requestId: requestIdArb
    })
    .chain((chosen) => parts.path(chosen.credential.actor).map((path) => ({ ...chosen, path })))
    .map(({ method, path, credential, contentType, transferEncoding, body, requestId }): FuzzCase => ({
      method,
      path,
      actor: credential.actor,
      authorization: credential.authorization,
      contentType: contentType.contentType,
      json: contentType.json,
      body: body.body,
      transferEncoding,
      syntax: body.syntax,
      requestId,
      secrets: body.secrets
    }))

const USER_WEIGHTS = { a: 6, b: 2, client: 1, none: 1, malformed: 1, unknown: 1, random: 1 } as const

/**
 * The requests aimed at one route: its methods mostly, credentials for its access (an application's often where one
 * is accepted, anyone's on a public route), path parameters for the caller, and its operation's bodies.
 */
const routeCaseArb = (fixture: FuzzFixture, route: FuzzRoute): fc.Arbitrary<FuzzCase> => {
  const methods = route.operations.flatMap((operation) => [
    operation.method,
    ...(operation.body === undefined ? [] : [operation.method]),
    ...(operation.method === "GET" ? ["HEAD"] : [])
  ])
  const accesses = route.operations.map((operation) => operation.access)
  const weights = accesses.every((access) => access === "public")
    ? {}
    : accesses.includes("anyCredential")
      ? { ...USER_WEIGHTS, client: 4 }
      : USER_WEIGHTS
  const reader = route.operations.find((operation) => operation.body !== undefined)
  return caseArb({
    method: methodArb(methods),
    credential: credentialArb(fixture, weights),
    path: (actor) => routePathArb(fixture, route, actor === "a" ? fixture.a : actor === "b" ? fixture.b : undefined),
    body: reader === undefined ? anyBodyArb : operationBodyArb(reader)
  })
}

/** How often a route is aimed at: more for what checks more (a credential, a body, path parameters). */
const routeWeight = (route: FuzzRoute): number =>
  route.operations.some((operation) => operation.access !== "public")
    ? 2 +
      (route.operations.some((operation) => operation.body !== undefined) ? 1 : 0) +
      (route.path.includes("{") ? 1 : 0)
    : 1

/**
 * One hostile request. Mostly aimed at one route of the contract at a time (so that requests its operations accept
 * happen too), some at the documents, some with everything random, some that Node's parser refuses.
 */
export const fuzzCase = (fixture: FuzzFixture): fc.Arbitrary<FuzzCase> => {
  const anyPath = anyPathArb(fixture)
  const anyone = credentialArb(fixture, {})
  return fc.oneof(
    ...ROUTES.map((route) => ({ weight: routeWeight(route), arbitrary: routeCaseArb(fixture, route) })),
    {
      weight: 1,
      arbitrary: caseArb({
        method: methodArb(["GET", "HEAD", "OPTIONS"]),
        credential: anyone,
        path: () => documentPathArb,
        body: anyBodyArb
      })
    },
    {
      weight: 3,
      arbitrary: caseArb({
        method: fc.constantFrom(...PARSER_METHODS),
        credential: anyone,
        path: () => anyPath,
        body: anyBodyArb
      })
    },
    {
      weight: 1,
      arbitrary: caseArb({ method: wireMethodArb, credential: anyone, path: () => anyPath, body: anyBodyArb })
    }
  )
}

/** The body's size in bytes, as the contract counts it (docs/api.md, "Precise rules"). */
export const bodyLength = (body: FuzzCase["body"]): number =>
  body === undefined ? 0 : typeof body === "string" ? Buffer.byteLength(body, "utf8") : body.length
