import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { hex32, hex48 } from "../src/http/hex.js"

// The entity tags and request ids on the wire are written with these: the same text as `toString(16)` padded.
describe("hex", () => {
  it("hex32 writes the 32 bits of any integer as toString(16) padded to 8 digits", () => {
    fc.assert(
      fc.property(fc.integer({ min: -(2 ** 31), max: 2 ** 32 - 1 }), (value) => {
        expect(hex32(value)).toBe((value >>> 0).toString(16).padStart(8, "0"))
      })
    )
    for (const value of [0, 1, 0xff, 0x7fffffff, 0x80000000, 0xffffffff, -1])
      expect(hex32(value)).toBe((value >>> 0).toString(16).padStart(8, "0"))
  })

  it("hex48 writes an integer below 2^48 as toString(16) padded to 12 digits", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (value) => {
        const below = value % 2 ** 48
        expect(hex48(below)).toBe(below.toString(16).padStart(12, "0"))
      })
    )
    for (const value of [0, 1, 2 ** 24 - 1, 2 ** 24, 2 ** 32, 2 ** 48 - 1])
      expect(hex48(value)).toBe(value.toString(16).padStart(12, "0"))
  })
})
