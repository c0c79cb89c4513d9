import type { Schema } from "effect"

/** Stable codes of a field problem (docs/api.md, "Precise rules"): the one list the types, Schemas and docs use. */
export const FIELD_ISSUE_CODES = [
  "required",
  "invalid_type",
  "too_short",
  "too_long",
  "out_of_range",
  "invalid_format",
  "unknown_field",
  "not_allowed"
] as const
export type FieldIssueCode = (typeof FIELD_ISSUE_CODES)[number]

export interface FieldIssue {
  /** JSON pointer (RFC 6901) to the field, e.g. `/email`; `""` is the whole input. */
  readonly pointer: string
  readonly code: FieldIssueCode
  readonly detail: string
}

/** Annotation key carrying the field issue code that a failing check or type reports. */
export const FIELD_ISSUE_CODE = "accordFieldIssueCode"

/**
 * Annotations for a check: the code a failure maps to and its human detail. Used on every bounded field so that the
 * issue code lives next to the bound it names.
 */
export const issue = (code: FieldIssueCode, detail: string): Schema.Annotations.Filter => ({
  [FIELD_ISSUE_CODE]: code,
  message: detail
})
