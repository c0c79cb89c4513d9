/**
 * Fixed-width lower-case hex of integers for the hot path (entity tags, request ids): table lookups, the same text
 * as `toString(16).padStart(width, "0")`, which V8 takes through its slow path for any value outside the small
 * integers (above 2^30), as most 32-bit hashes and the request counter are: about ten times the cost (issue 37).
 */
const BYTE_HEX: ReadonlyArray<string> = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"))

const hexByte = (byte: number): string => BYTE_HEX[byte & 0xff] ?? "00"

/** The 32 bits of `value` (its `>>> 0`) as 8 hex digits. */
export const hex32 = (value: number): string =>
  hexByte(value >>> 24) + hexByte(value >>> 16) + hexByte(value >>> 8) + hexByte(value)

const TWO_24 = 0x1000000

/** A non-negative integer below 2^48 as 12 hex digits. */
export const hex48 = (value: number): string => {
  const high = Math.floor(value / TWO_24)
  const low = value - high * TWO_24
  return (
    hexByte(high >>> 16) + hexByte(high >>> 8) + hexByte(high) + hexByte(low >>> 16) + hexByte(low >>> 8) + hexByte(low)
  )
}
