import fc from "fast-check"

// JSON text built from a small tree, so that bodies can carry what JSON.stringify never writes: duplicate keys,
// escaped keys, raw number literals (`60.0`, `1e400`), odd whitespace.
export type Json =
  { readonly raw: string } | { readonly items: ReadonlyArray<Json> } | { readonly entries: ReadonlyArray<Entry> }

/** The key as JSON text (quoted, possibly escaped) and its value. */
export type Entry = readonly [key: string, value: Json]

export const raw = (text: string): Json => ({ raw: text })

export const str = (value: string): Json => raw(JSON.stringify(value))

export const key = (name: string): string => JSON.stringify(name)

/** The same text with every character as a \u escape: the same string to a JSON reader. */
export const escaped = (text: string): string =>
  `"${[...text].map((char) => `\\u${(char.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`).join("")}"`

export const writeJson = (value: Json, gap: string): string => {
  if ("raw" in value) return value.raw
  if ("items" in value) return `[${value.items.map((item) => writeJson(item, gap)).join(`,${gap}`)}]`
  return `{${gap}${value.entries.map(([name, item]) => `${name}${gap}:${gap}${writeJson(item, gap)}`).join(`,${gap}`)}${gap}}`
}

export const FORBIDDEN_KEYS = ["__proto__", "constructor", "prototype"] as const

export const isForbidden = (name: string): boolean => (FORBIDDEN_KEYS as ReadonlyArray<string>).includes(name)

export const gapArb = fc.constantFrom("", "", "", " ", "\n", "\t", "\r\n  ")

export const lengths = [35, 36, 64, 65, 128, 129, 254, 255, 2000] as const

export const stringArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary", maxLength: 30 }),
  fc.string({ unit: "grapheme", maxLength: 30 }),
  // Lone surrogates (JSON.stringify escapes them), NUL, separators, ligatures, case-folding traps.
  fc.constantFrom("\ud800", "\udc00x", "a\ud83d", "😀", "\u0000", "a\u2028b", "ﬃ", "İ", "é", "<script>"),
  fc.constantFrom(...lengths).map((length) => "x".repeat(length))
)

export const numberArb: fc.Arbitrary<Json> = fc.oneof(
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

export const scalarArb: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom("null", "true", "false").map(raw),
  numberArb,
  stringArb.map(str),
  // Escapes the reader must decode itself.
  fc.constantFrom('"\\ud800"', '"\\uDFFF\\u0041"', '"\\u0000"', '"\\/"', '"\\"\\\\"').map(raw)
)

/** Any JSON value without duplicate or prototype keys, at most three levels deep. */
export const cleanJsonArb: fc.Arbitrary<Json> = fc.letrec<{ value: Json }>((tie) => ({
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

export const wrongTypeArb: fc.Arbitrary<Json> = fc
  .constantFrom("null", "true", "false", "1", "-1.5", '""', '"x"', "[]", "{}", '[1,"a"]', '{"k":1}')
  .map(raw)

/** A value of any type and shape: what a field gets when the fuzz ignores what it is for. */
export const hostileValueArb: fc.Arbitrary<Json> = fc.oneof(wrongTypeArb, scalarArb, cleanJsonArb)

/**
 * Values near an example's: itself, and what a careless client or reader of its JSON type would make of it (other
 * case, padding, boundary lengths, other spellings of the same number, off by one, out of range, another type).
 */
export const variantsOf = (value: unknown): ReadonlyArray<Json> => {
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

export const parses = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** Nested containers around an empty one: `depth` levels counting the outermost. */
export const nested = (depth: number, objects: boolean): string =>
  objects ? `${'{"a":'.repeat(depth - 1)}{}${"}".repeat(depth - 1)}` : `${"[".repeat(depth)}${"]".repeat(depth)}`
