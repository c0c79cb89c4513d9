import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { MAX_JSON_DEPTH, readJson } from "../src/http/json-body.js"
import { isJsonMediaType } from "../src/http/media-type.js"
import { readCredential } from "../src/http/authorization.js"

const bytes = (text: string) => new TextEncoder().encode(text)
const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth)

describe("readJson", () => {
  it("accepts JSON.parse's values and returns the same value", () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = JSON.stringify(value)
        const result = readJson(bytes(text))
        // fc.jsonValue rarely nests deeper than our limit, and sometimes uses a key such as "__proto__" (its strings
        // favour them on purpose): those are refused with their reason, never thrown.
        if (result.ok) expect(result.value).toEqual(JSON.parse(text))
        else expect(result.detail).toMatch(/deeper|not allowed/)
      })
    )
  })

  it.each([
    ["a duplicate key", '{"a":1,"a":2}'],
    ["a duplicate key spelled with an escape", '{"a":1,"\\u0061":2}'],
    ["a nested duplicate key", '{"x":[{"b":1,"c":{"d":1,"d":1}}]}'],
    ["__proto__", '{"__proto__":{}}'],
    ["a nested constructor", '{"a":{"constructor":1}}'],
    ["prototype in an array", '[{"prototype":1}]'],
    ["a byte-order mark", "\uFEFF{}"],
    ["trailing commas", '{"a":1,}'],
    ["nothing but spaces", "   "]
  ])("refuses %s", (_, text) => {
    expect(readJson(bytes(text)).ok).toBe(false)
  })

  it("names no key the client sent in its reason (a problem never carries what the client sent)", () => {
    const repeated = readJson(bytes('{"a-secret-value":1,"a-secret-value":2}'))
    expect(repeated).toEqual({
      ok: false,
      detail: "The body is not acceptable JSON: a key appears more than once in one object."
    })
  })

  it("refuses invalid UTF-8", () => {
    expect(readJson(new Uint8Array([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x31, 0x7d])).ok).toBe(false)
  })

  it(`allows ${MAX_JSON_DEPTH} levels of nesting and refuses ${MAX_JSON_DEPTH + 1}`, () => {
    expect(readJson(bytes(nested(MAX_JSON_DEPTH))).ok).toBe(true)
    expect(readJson(bytes(nested(MAX_JSON_DEPTH + 1))).ok).toBe(false)
  })

  it("does not mistake brackets, quotes and keys inside strings for structure", () => {
    const result = readJson(bytes('{"a":"[[[{\\"a\\":1,\\"a\\":2}","b":"__proto__","c":"\\\\"}'))
    expect(result).toEqual({ ok: true, value: { a: '[[[{"a":1,"a":2}', b: "__proto__", c: "\\" } })
  })

  it("reads 60.0 as the number 60 and 1e400 as a non-integer", () => {
    expect(readJson(bytes('{"t":60.0,"u":1e400}'))).toEqual({ ok: true, value: { t: 60, u: Infinity } })
  })
})

describe("isJsonMediaType", () => {
  it.each([
    "application/json",
    "Application/JSON",
    "application/json; charset=utf-8",
    'application/json;charset="UTF8"',
    "application/json ; CHARSET=Utf-8; foo=bar"
  ])("accepts %s", (type) => expect(isJsonMediaType(type)).toBe(true))

  it.each([
    undefined,
    "",
    "text/plain",
    "application/merge-patch+json",
    "application/json; charset=latin1",
    "application/jsonx",
    "application/json; charset"
  ])("refuses %s", (type) => expect(isJsonMediaType(type)).toBe(false))
})

describe("readCredential", () => {
  it.each([
    [undefined, "Missing"],
    ["", "Missing"],
    ["Basic dXNlcjpwYXNz", "Missing"],
    ["Bearer", "Malformed"],
    ["Bearer a b", "Malformed"],
    ["Bearer " + "a".repeat(513), "Malformed"],
    ["Bearer tok!", "Malformed"]
  ])("reads %j as %s", (header, tag) => expect(readCredential(header)._tag).toBe(tag))

  it.each([
    ["Bearer abc", "abc"],
    ["bEaReR abc", "abc"],
    ["Token abc", "abc"],
    ["Bearer    abc==", "abc=="],
    ["Bearer " + "a".repeat(512), "a".repeat(512)]
  ])("reads %j as a token", (header, token) => expect(readCredential(header)).toEqual({ _tag: "Token", token }))
})
