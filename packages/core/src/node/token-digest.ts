import { createHash, timingSafeEqual } from "node:crypto"

/** Tokens are stored and looked up only as SHA-256 digests (hex), never in clear. */
export const tokenDigest = (token: string): string => createHash("sha256").update(token, "utf8").digest("hex")

/** Constant-time equality of two hex digests of equal length. */
export const digestsEqual = (a: string, b: string): boolean => {
  const left = Buffer.from(a, "hex")
  const right = Buffer.from(b, "hex")
  return left.length === right.length && timingSafeEqual(left, right)
}
