import type { HttpHeaders, StaticAsset } from "./types.js"
import { entityTagTextOfBytes } from "./conditional.js"
import { headerValue } from "./header-value.js"

/**
 * Content negotiation for static files (docs/api.md, "The docs page's files"): which of a file's precomputed codings
 * the request's `Accept-Encoding` takes (RFC 9110, 12.5.3), and each coding's representation with its strong ETag.
 * Runtime-neutral: the codings are computed by whoever loads the files (`@accord/api-reference` uses node:zlib); the
 * core only picks one.
 */

/** The content codings a static file may carry, in the order the server prefers them at equal weight. */
export type ContentCoding = "br" | "gzip"

/** Longer `Accept-Encoding` values are ignored (identity): browsers send about 30 characters. */
export const MAX_ACCEPT_ENCODING_LENGTH = 1024

// `q=` and a qvalue (RFC 9110, 12.4.2): 0 to 1 with at most three decimals. Anchored, no nested quantifier.
const QVALUE = /^[qQ]\s*=\s*(0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

/**
 * The coding to send, from the request's `Accept-Encoding` and the codings `available` (an absent header, one
 * too long, or one that accepts neither is identity: undefined). The highest weight wins, `br` before `gzip` at equal
 * weight; `q=0` refuses a coding, also through `*;q=0`; `x-gzip` is `gzip` (RFC 9110, 8.4.1.3). One pass over at most
 * `MAX_ACCEPT_ENCODING_LENGTH` characters.
 */
export const negotiateEncoding = (
  value: string | ReadonlyArray<string> | undefined,
  available: ReadonlySet<ContentCoding>
): ContentCoding | undefined => {
  if (value === undefined || available.size === 0) return undefined
  const header = typeof value === "string" ? value : value.join(",")
  if (header.length > MAX_ACCEPT_ENCODING_LENGTH) return undefined
  let br: number | undefined
  let gzip: number | undefined
  let any: number | undefined
  for (const member of header.split(",")) {
    const [rawName = "", ...parameters] = member.split(";")
    const name = rawName.trim().toLowerCase()
    if (name === "") continue
    let weight = 1
    for (const parameter of parameters) {
      const q = QVALUE.exec(parameter.trim())
      // A malformed weight makes the member unreadable: it neither grants nor refuses anything.
      weight = q === null ? Number.NaN : Number(q[1])
    }
    if (Number.isNaN(weight)) continue
    // The first mention of a coding counts, as a repeated one is ambiguous.
    if (name === "br") br ??= weight
    else if (name === "gzip" || name === "x-gzip") gzip ??= weight
    else if (name === "*") any ??= weight
  }
  const brWeight = available.has("br") ? (br ?? any ?? 0) : 0
  const gzipWeight = available.has("gzip") ? (gzip ?? any ?? 0) : 0
  if (brWeight === 0 && gzipWeight === 0) return undefined
  return brWeight >= gzipWeight ? "br" : "gzip"
}

/** One coding of a file: its bytes, its strong ETag and its `Content-Encoding` (none for identity). */
export interface Representation {
  readonly body: Uint8Array
  readonly etag: string
  readonly contentEncoding: ContentCoding | undefined
}

/** A negotiated file's representations, computed once per file (`representationsOf`). */
export interface Representations {
  readonly identity: Representation
  readonly encoded: ReadonlyMap<ContentCoding, Representation>
  readonly available: ReadonlySet<ContentCoding>
}

// Hashing the 1.7 MB swagger-ui bundle takes a few milliseconds: once per file object, on its first request.
const computed = new WeakMap<StaticAsset, Representations>()

/** The file's representations, or undefined for a file that is not negotiated (no `encodings`). */
export const representationsOf = (file: StaticAsset): Representations | undefined => {
  const { encodings } = file
  if (encodings === undefined) return undefined
  let representations = computed.get(file)
  if (representations === undefined) {
    // Each coding's tag is the identity's with the coding as a suffix (`"...-br"`): it changes with the file and
    // differs between codings, as RFC 9110 (8.8.3) asks of distinct representations.
    const tag = entityTagTextOfBytes(file.body)
    const encoded = new Map<ContentCoding, Representation>()
    for (const coding of ["br", "gzip"] as const) {
      const body = encodings[coding]
      if (body !== undefined) encoded.set(coding, { body, etag: `"${tag}-${coding}"`, contentEncoding: coding })
    }
    representations = {
      identity: { body: file.body, etag: `"${tag}"`, contentEncoding: undefined },
      encoded,
      available: new Set(encoded.keys())
    }
    computed.set(file, representations)
  }
  return representations
}

/** The representation of a negotiated file the request takes. */
export const chooseRepresentation = (representations: Representations, headers: HttpHeaders): Representation => {
  const coding = negotiateEncoding(headerValue(headers, "accept-encoding"), representations.available)
  return (coding === undefined ? undefined : representations.encoded.get(coding)) ?? representations.identity
}
