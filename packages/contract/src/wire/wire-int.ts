import { Schema } from "effect"

/** An integer in a response: JSON Schema's `integer`, as every record's id and offset are written. */
export const WireInt = Schema.Finite.check(
  Schema.makeFilter<number>(Number.isInteger, { toJsonSchema: () => ({ type: "integer" }) })
).annotate({ identifier: "Int", title: "int", description: "an integer" })
