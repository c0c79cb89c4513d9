import { NAMES_RESOURCE, NotFound, pathParamsDecoderFor, PaymentMethodId } from "@accord/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Schema } from "effect"

/** The exit of decoding `input` with a decoder compiled from `schema`. */
const exitOf = (schema: Schema.Decoder<unknown>, input: unknown) =>
  Effect.runSyncExit(Effect.fromResult(pathParamsDecoderFor(schema)(input)))

describe("a path parameter's Schema carries its own 404 (docs/api.md, Precise rules)", () => {
  const params = Schema.Struct({ id: PaymentMethodId })

  it("decodes a value its Schema accepts", () => {
    expect(exitOf(params, { id: "pm_1" })).toEqual(Exit.succeed({ id: "pm_1" }))
  })

  it.each(["", "a".repeat(101), "pm 1", "pm%2F1", "é"])("answers %j with the NotFound its Schema names", (id) => {
    const exit = exitOf(params, { id })
    expect(Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail" && exit.cause.reasons[0].error).toEqual(
      new NotFound({ resource: "payment_method" })
    )
  })

  it("names, for several parameters, the resource of the one refused", () => {
    // A hypothetical second id Schema naming another resource (NotFound knows one today: its type is widened here).
    const Other = Schema.String.check(Schema.isPattern(/^o_[0-9]+$/)).annotate({ [NAMES_RESOURCE]: "other" })
    const both = Schema.Struct({ id: PaymentMethodId, other: Other })
    const exit = exitOf(both, { id: "pm_1", other: "nope" })
    expect(Exit.isFailure(exit) && exit.cause.reasons[0]?._tag === "Fail" && exit.cause.reasons[0].error).toEqual(
      new NotFound({ resource: "other" as NotFound["resource"] })
    )
  })

  it("refuses, as the route table is compiled, a parameter whose Schema names no resource", () => {
    expect(() => pathParamsDecoderFor(Schema.Struct({ id: Schema.String }))).toThrow(
      "path parameter id: its Schema names no resource"
    )
  })
})
