import { headerValue } from "./header-value.js"
import { isJsonObject, readJson } from "./json-body.js"
import { isJsonMediaType } from "./media-type.js"
import { problem, type Problem } from "./problem.js"
import { PROBLEMS, type BodySpec } from "@accord/contract"
import type { BodyReadResult, HttpRequest } from "./types.js"

/** A header's value; the first of several. */
export const header = (request: HttpRequest, name: string): string | undefined => {
  const value = headerValue(request.headers, name)
  return typeof value === "string" ? value : value?.[0]
}

/**
 * The first transfer coding other than `chunked` (RFC 9112 6.1: a server answers 501 to one it does not implement),
 * or undefined; the body is never read as if the coding were not there (docs/api.md, "Precise rules").
 */
const unimplementedTransferCoding = (transferEncoding: string | undefined): string | undefined =>
  transferEncoding
    ?.split(",")
    .map((coding) => coding.trim().toLowerCase())
    .find((name) => name !== "chunked")
    ?.slice(0, 64)

/**
 * Whether the request sent a body (docs/api.md, "Precise rules"), one its `readBody` can read: a chunked body, or a
 * positive Content-Length; under HTTP/2 (`framedBody`), a stream the headers did not end, unless a Content-Length of 0
 * says it carries nothing (RFC 9113, 8.1.1: the length, when sent, is the DATA's).
 */
export const sentBody = (request: HttpRequest): boolean => {
  if (request.readBody === undefined) return false
  const length = header(request, "content-length")
  if (request.framedBody !== undefined) return request.framedBody && (length === undefined || Number(length) > 0)
  if (header(request, "transfer-encoding") !== undefined) return true
  return length !== undefined && Number(length) > 0
}

/**
 * What the headers of a sent body decide before a byte is read: 501 for a transfer coding other than chunked, 415
 * for a type other than JSON, 413 for a declared size over `limit`; undefined when the body may be read.
 */
export const bodyHeadersRefusal = (request: HttpRequest, limit: number): Problem | undefined => {
  const coding = unimplementedTransferCoding(header(request, "transfer-encoding"))
  if (coding !== undefined) return problem("not_implemented", PROBLEMS.not_implemented.detail.transferCoding(coding))
  if (!isJsonMediaType(header(request, "content-type"))) return problem("unsupported_media_type")
  if (Number(header(request, "content-length") ?? 0) > limit) return tooLarge(limit)
  return undefined
}

export type JsonBody = { readonly ok: true; readonly json: unknown } | { readonly ok: false; readonly problem: Problem }

const tooLarge = (limit: number) => problem("payload_too_large", PROBLEMS.payload_too_large.detail.overLimit(limit))
const refused = (problem: Problem): JsonBody => ({ ok: false, problem })
const EMPTY_OBJECT: JsonBody = { ok: true, json: {} }
const NO_BODY_REQUIRED = refused(problem("invalid_json", PROBLEMS.invalid_json.detail.bodyRequired))

/** What no body (none sent, or zero bytes) stands for: 400 where one is required, else `{}` (docs/api.md, "Precise rules"). */
export const noBody = (body: BodySpec): JsonBody => (body.required ? NO_BODY_REQUIRED : EMPTY_OBJECT)

/**
 * The bytes as read, as a JSON object: 413 past `limit`, 400 for a body that broke off, 408 for one that did not arrive
 * in time (already answered by the server: this answer is only logged), then 400 `invalid_json` for its syntax and
 * 400 `invalid_body` for anything but an object.
 */
export const jsonBody = (read: BodyReadResult, body: BodySpec, limit: number): JsonBody => {
  if (read._tag === "TooLarge") return refused(tooLarge(limit))
  if (read._tag === "Aborted") return refused(problem("invalid_json", PROBLEMS.invalid_json.detail.unreadable))
  if (read._tag === "TimedOut") return refused(problem("request_timeout"))
  if (read.bytes.length === 0) return noBody(body)
  const parsed = readJson(read.bytes)
  if (!parsed.ok) return refused(problem("invalid_json", parsed.detail))
  return isJsonObject(parsed.value) ? { ok: true, json: parsed.value } : refused(problem("invalid_body"))
}
