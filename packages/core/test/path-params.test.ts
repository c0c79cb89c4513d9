import { NotFound, PaymentMethodId } from "@accord/domain"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"
import { pathParamsDecoderFor } from "../src/http/path-params.js"

/** The exit of decoding `input` with a decoder compiled from `schema`. */
const exitOf = (schema: Schema.Decoder<unknown>, input: unknown) =>
  Effect.runSyncExit(Effect.fromResult(pathParamsDecoderFor(schema)(input)))

const failureOf = (exit: Exit.Exit<unknown, unknown>): unknown =>
  Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail" ? exit.cause.reasons[0].error : undefined

describe("a path parameter its Schema refuses names nothing: 404 (docs/api.md, Precise rules)", () => {
  const params = Schema.Struct({ id: PaymentMethodId })

  it("decodes a value its Schema accepts", () => {
    expect(exitOf(params, { id: "pm_1" })).toEqual(Exit.succeed({ id: "pm_1" }))
  })

  it.each(["", "a".repeat(101), "pm 1", "pm%2F1", "é"])("answers %j with a NotFound naming the parameter", (id) => {
    expect(failureOf(exitOf(params, { id }))).toEqual(new NotFound({ resource: "path parameter id" }))
  })

  it("names, for several parameters, the one refused; any id Schema will do, with no annotation", () => {
    const Other = Schema.String.check(Schema.isPattern(/^o_[0-9]+$/))
    const both = Schema.Struct({ id: PaymentMethodId, other: Other })
    expect(failureOf(exitOf(both, { id: "pm_1", other: "nope" }))).toEqual(
      new NotFound({ resource: "path parameter other" })
    )
  })
})
