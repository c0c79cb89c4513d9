import { hash, timingSafeEqual } from "node:crypto"

/**
 * Tokens are stored and looked up only as SHA-256 digests (hex), never in clear. One-shot `hash` (UTF-8 for a string,
 * Node 20.12+): the same digest as `createHash(...).update(token, "utf8").digest("hex")` at half the cost per request.
 */
export const tokenDigest = (token: string): string => hash("sha256", token, "hex")

/**
 * A token's digest as bytes and as the hex `tokenDigest` writes, from one hash: for a store that looks credentials up
 * by hex and then compares bytes (`sameDigestBytes`), with no hex decoding per request.
 */
export const tokenDigestWithBytes = (token: string): { readonly hex: string; readonly bytes: Buffer } => {
  const bytes = hash("sha256", token, "buffer")
  return { hex: bytes.toString("hex"), bytes }
}

const SHA256_HEX = /^[0-9a-f]{64}$/

/**
 * Constant-time equality of two digests as `tokenDigest` writes them. Anything else is unequal: `Buffer.from(x, "hex")`
 * silently drops what is not hex, so without the check "zz" would equal "yy", and a digest the same digest plus junk.
 */
export const digestsEqual = (a: string, b: string): boolean =>
  SHA256_HEX.test(a) && SHA256_HEX.test(b) && timingSafeEqual(Buffer.from(a, "hex"), Buffer.from(b, "hex"))

/**
 * Constant-time equality of two SHA-256 digests as bytes (`tokenDigestWithBytes`): false for any other length. About
 * a third of `digestsEqual`'s cost per request, which validates and decodes two hex strings first (bench/remaining-costs.md).
 */
export const sameDigestBytes = (a: Uint8Array, b: Uint8Array): boolean =>
  a.length === SHA256_BYTES && b.length === SHA256_BYTES && timingSafeEqual(a, b)

const SHA256_BYTES = 32
