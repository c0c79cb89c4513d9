import { Schema, SchemaTransformation } from "effect"
import { issue } from "./field-issue.js"
import { describedAs } from "./json-schema.js"

const MAX_LENGTH = 254
const MAX_LOCAL_LENGTH = 64
const LOCAL_PART = /^[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*$/
const LABEL = /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/
const HAS_LETTER = /[A-Za-z]/

const isAsciiWhitespace = (code: number): boolean =>
  code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d

/**
 * Trims ASCII whitespace only (docs/api.md: "after trimming ASCII whitespace"); String#trim would eat Unicode spaces.
 * Two index scans, linear in the input: a regular expression for the trailing run (`[\t\n\f\r ]+$`) is tried at
 * every position of an inner run and is quadratic in its length (docs/SECURITY.md).
 */
export const trimAsciiWhitespace = (value: string): string => {
  let start = 0
  let end = value.length
  while (start < end && isAsciiWhitespace(value.charCodeAt(start))) start++
  while (end > start && isAsciiWhitespace(value.charCodeAt(end - 1))) end--
  return start === 0 && end === value.length ? value : value.slice(start, end)
}

const isPlainAddress = (value: string): boolean => {
  const at = value.indexOf("@")
  if (at < 0 || at !== value.lastIndexOf("@")) return false
  const local = value.slice(0, at)
  const labels = value.slice(at + 1).split(".")
  return (
    local.length <= MAX_LOCAL_LENGTH &&
    LOCAL_PART.test(local) &&
    labels.length >= 2 &&
    labels.every((label) => LABEL.test(label)) &&
    HAS_LETTER.test(labels[labels.length - 1] ?? "")
  )
}

const lowerCaseDomain = (address: string): string => {
  const at = address.indexOf("@")
  return address.slice(0, at) + address.slice(at).toLowerCase()
}

const CheckedAddress = Schema.String.check(
  Schema.isMinLength(1, issue("too_short", "must not be empty")).abort(),
  Schema.isMaxLength(MAX_LENGTH, issue("too_long", `must be at most ${MAX_LENGTH} characters`)).abort(),
  Schema.makeFilter<string>(isPlainAddress, {
    ...issue("invalid_format", "must be a plain email address (local@domain.tld)"),
    toJsonSchema: () => ({})
  }).abort()
)

const normalise = (decode: (value: string) => string) =>
  SchemaTransformation.transform({ decode, encode: (value: string) => value })

/**
 * An email address as docs/api.md defines it: ASCII whitespace trimmed, plain dot-atom form, domain lower-cased.
 * Decoding normalises; the decoded value is what is stored and returned.
 */
export const Email = Schema.String.check(describedAs({ format: "email", minLength: 1, maxLength: MAX_LENGTH }))
  .annotate({ identifier: "Email" })
  .pipe(
    Schema.decodeTo(CheckedAddress, normalise(trimAsciiWhitespace)),
    Schema.decodeTo(Schema.String, normalise(lowerCaseDomain)),
    Schema.brand("Email")
  )
export type Email = typeof Email.Type

/** The key that makes two addresses the same account: the whole address, case-insensitively. */
export const emailKey = (email: Email): string => email.toLowerCase()
