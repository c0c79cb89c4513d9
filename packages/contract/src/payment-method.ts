import { Schema } from "effect"
import { StrictBoolean } from "./fields/boolean.js"
import { issue } from "./fields/field-issue.js"
import { Timestamp } from "./fields/timestamp.js"

const isTrue = (value: boolean): value is true => value
const NOT_ALLOWED = issue("not_allowed", "may only be true")
// Once in the JSON Schema (the OpenAPI document), from the decoded side's check.
const ONLY_TRUE = { ...NOT_ALLOWED, toJsonSchema: () => ({ const: true }) }

/**
 * `is_default` may only confirm the operation: `false` would ask for something this route does not do. Checked on a
 * boolean, so that `"true"` is `invalid_type` and `false` is `not_allowed` (docs/api.md), and typed `true` on both
 * sides, so that a client cannot even write `false`: `Schema.refine` narrows the decoded side only, so the encoded
 * side is narrowed by the same guard through `flip`.
 */
const OnlyTrue = Schema.flip(
  Schema.flip(StrictBoolean.pipe(Schema.refine(isTrue, NOT_ALLOWED))).pipe(Schema.refine(isTrue, ONLY_TRUE))
)

/** Set-default body: `{}` or `{"is_default": true}`; no body at all counts as `{}`. */
export const SetDefaultBody = Schema.Struct({ is_default: Schema.optionalKey(OnlyTrue) }).annotate({
  identifier: "PaymentMethodUpdate"
})

export const PaymentMethodView = Schema.Struct({
  id: Schema.String,
  is_default: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
}).annotate({ identifier: "PaymentMethod" })
export type PaymentMethodView = typeof PaymentMethodView.Type

export const PaymentMethodList = Schema.Struct({ data: Schema.Array(PaymentMethodView) }).annotate({
  identifier: "PaymentMethodList"
})
export type PaymentMethodList = typeof PaymentMethodList.Type
