import type { Schema } from "effect"

/** Stable codes of a field problem, as listed in docs/api.md ("Precise rules"). */
export type FieldIssueCode =
  | "required"
  | "invalid_type"
  | "too_short"
  | "too_long"
  | "out_of_range"
  | "invalid_format"
  | "unknown_field"
  | "not_allowed"

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
