import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { decoderFor, PreferencesPatchBody } from "@accord/core"

describe("smoke", () => {
  it.effect("decodes", () =>
    Effect.gen(function* () {
      const out = yield* decoderFor(PreferencesPatchBody)({ language: "EN-us" })
      expect(out.language).toBe("en-US")
    }))
})
