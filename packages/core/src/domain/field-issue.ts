import type { SchemaAST } from "effect"

/** Stable codes of a field problem, as listed in CONTRACT.md ("Precise rules"). */
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

/** Annotation key carrying the field issue code that a failing refinement reports. */
export const FieldIssueCodeId: unique symbol = Symbol.for("@accord/core/FieldIssueCode")

/**
 * Annotations for a refinement: the code a failure maps to and its human detail.
 * Used on every bounded field so that the issue code lives next to the bound it names.
 */
export const issue = (code: FieldIssueCode, detail: string): SchemaAST.Annotations => ({
  [FieldIssueCodeId]: code,
  message: () => detail
})
