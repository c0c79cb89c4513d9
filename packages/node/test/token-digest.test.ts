import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { digestsEqual, sameDigestBytes, tokenDigest, tokenDigestWithBytes } from "@accord/node/token-digest"

// docs/SECURITY.md "Constant-time token comparison": the comparison both stores' authenticators end with.
describe("tokenDigest and digestsEqual", () => {
  const digest = tokenDigest("a-token")

  it("digests a token as lower-case SHA-256 hex of its UTF-8 bytes", () => {
    expect(digest).toBe(createHash("sha256").update("a-token", "utf8").digest("hex"))
    expect(tokenDigest("é")).toBe(
      createHash("sha256")
        .update(Buffer.from([0xc3, 0xa9]))
        .digest("hex")
    )
  })

  it("is true only for the same digest", () => {
    expect(digestsEqual(digest, tokenDigest("a-token"))).toBe(true)
    expect(digestsEqual(digest, tokenDigest("a-token2"))).toBe(false)
    // One bit apart, in the last byte: a prefix comparison would call these equal.
    const lastFlipped = digest.slice(0, 63) + (parseInt(digest.slice(63), 16) ^ 1).toString(16)
    expect(digestsEqual(digest, lastFlipped)).toBe(false)
  })

  it("is false, without throwing, for inputs of different lengths or that are not digests", () => {
    expect(digestsEqual(digest, digest.slice(0, 62))).toBe(false)
    expect(digestsEqual(digest, `${digest}00`)).toBe(false)
    expect(digestsEqual(digest, `${digest}zz`)).toBe(false)
    expect(digestsEqual("", "")).toBe(false)
    // Buffer.from(x, "hex") reads both of these as empty, and "ab" and "abc" as the same byte.
    expect(digestsEqual("zz", "yy")).toBe(false)
    expect(digestsEqual("ab", "abc")).toBe(false)
    expect(digestsEqual(digest.toUpperCase(), digest)).toBe(false)
  })
})

describe("tokenDigestWithBytes and sameDigestBytes", () => {
  it("give the digest tokenDigest writes, and its 32 bytes", () => {
    const { hex, bytes } = tokenDigestWithBytes("a-token")
    expect(hex).toBe(tokenDigest("a-token"))
    expect(Buffer.from(bytes).equals(Buffer.from(hex, "hex"))).toBe(true)
  })

  it("is true only for the same 32 bytes, and false without throwing for any other length", () => {
    const { bytes } = tokenDigestWithBytes("a-token")
    expect(sameDigestBytes(bytes, tokenDigestWithBytes("a-token").bytes)).toBe(true)
    expect(sameDigestBytes(bytes, tokenDigestWithBytes("a-token2").bytes)).toBe(false)
    const lastFlipped = Uint8Array.from(bytes)
    lastFlipped[31] = (lastFlipped[31] ?? 0) ^ 1
    expect(sameDigestBytes(bytes, lastFlipped)).toBe(false)
    expect(sameDigestBytes(bytes, bytes.subarray(0, 31))).toBe(false)
    expect(sameDigestBytes(new Uint8Array(0), new Uint8Array(0))).toBe(false)
    expect(sameDigestBytes(new Uint8Array(33), new Uint8Array(33))).toBe(false)
  })
})
