import fc from "fast-check"
import type { BodySyntax } from "./fuzz-case.js"
import {
  cleanJsonArb,
  escaped,
  FORBIDDEN_KEYS,
  gapArb,
  hostileValueArb,
  isForbidden,
  key,
  nested,
  parses,
  raw,
  scalarArb,
  str,
  variantsOf,
  writeJson,
  type Entry,
  type Json
} from "./json-text.js"
import { docsOf, fieldsOf, isRecord, ROUTES, secretFieldsOf, type ContractOperation } from "./targets.js"

// The bodies the fuzz sends: objects made from an operation's body Schema (its fields) and docs (its examples), mixed
// with hostile values and mutations, and junk made with no operation in mind. Each says what its JSON text is
// (`syntax`), never what the contract answers (the oracle's).

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

export interface BodyChoice {
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
export const operationBodyArb = (operation: ContractOperation): fc.Arbitrary<BodyChoice> =>
  fc.oneof(
    { weight: 12, arbitrary: objectBodyArb(operation) },
    { weight: 3, arbitrary: junkBodyArb },
    { weight: 1, arbitrary: noBodyArb }
  )

const BODY_OPERATIONS: ReadonlyArray<ContractOperation> = ROUTES.flatMap((route) =>
  route.operations.filter((operation) => operation.body !== undefined)
)

/** Any body: any operation's, junk, or none (for a request whose operation reads none). */
export const anyBodyArb: fc.Arbitrary<BodyChoice> = fc.oneof(...BODY_OPERATIONS.map(operationBodyArb), junkBodyArb)
