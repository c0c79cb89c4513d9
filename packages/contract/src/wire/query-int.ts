import { Schema, SchemaTransformation } from "effect"

/** Decimal digits without sign, leading zero or exponent; tested after the length bound. */
const DECIMAL = /^(0|[1-9][0-9]*)$/

/**
 * A query parameter's integer from `minimum` to `maximum` (non-negative): its text is decimal digits without sign,
 * leading zero or exponent, decoded to the number. The OpenAPI document describes a query parameter by its decoded
 * side (openapi.ts), so this one is `type: integer` with these bounds: a generated client types it as a number, and
 * the document's bounds are the ones the server holds it to.
 */
export const QueryInt = (minimum: number, maximum: number) =>
  Schema.String.check(
    Schema.isMaxLength(String(maximum).length).abort(),
    Schema.isPattern(DECIMAL, { expected: `a decimal integer, ${minimum} to ${maximum}` })
  ).pipe(
    Schema.decodeTo(Schema.Int.check(Schema.isBetween({ minimum, maximum })), SchemaTransformation.numberFromString)
  )
