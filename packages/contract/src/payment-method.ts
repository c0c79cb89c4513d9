import { Schema } from "effect"
import { StrictBoolean } from "./fields/boolean.js"
import { issue } from "./fields/field-issue.js"
import { Timestamp } from "./fields/timestamp.js"

/** `is_default` may only confirm the operation: `false` would ask for something this route does not do. */
const OnlyTrue = StrictBoolean.check(
  Schema.makeFilter<boolean>((value) => value, {
    ...issue("not_allowed", "may only be true"),
    toJsonSchema: () => ({ const: true })
  })
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
