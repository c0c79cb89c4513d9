import { Schema } from "effect"

/** A JSON boolean only: `"true"` and `1` are type errors, not truthy values. */
export const StrictBoolean = Schema.Boolean.annotate({
  description: "a boolean (true or false)",
  expected: "a boolean (true or false)"
})
