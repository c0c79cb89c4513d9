import { NotFound, type PaymentMethodId, PreconditionFailed, Unavailable, type UserId } from "@accord/domain"
import { operations } from "@accord/contract"
import { accordImplementations, type Implementation, type Implementations } from "@accord/core"
import { describe, expect, expectTypeOf, it } from "@effect/vitest"
import { Effect } from "effect"

// The implementation map is checked against the contract at compile time (`npx tsc -p tsconfig.test.json`): each
// `@ts-expect-error` line below must fail to compile, and that check fails if one ever compiles. None of these maps
// is ever run: only their types matter.

const { listPaymentMethods: _leftOut, ...allButOne } = accordImplementations

// @ts-expect-error: listPaymentMethods is declared in the contract and left unimplemented
const _unimplemented: Implementations = allButOne

const _unknownOperation: Implementations = {
  ...accordImplementations,
  // @ts-expect-error: notAnOperation is no operation of the contract
  notAnOperation: () => Effect.void
}

const _wrongOutput: Implementations = {
  ...accordImplementations,
  // @ts-expect-error: the success Schema of getLanguagePreferences is PreferencesView, not a bare language tag
  getLanguagePreferences: () => Effect.succeed("en")
}

const _undeclaredError: Implementations = {
  ...accordImplementations,
  // @ts-expect-error: updateLanguagePreferences declares PreconditionFailed and Unavailable only, so it may not fail with NotFound
  updateLanguagePreferences: () => Effect.fail(new NotFound({ resource: "payment_method" }))
}

const _wrongInput: Implementations = {
  ...accordImplementations,
  // @ts-expect-error: setDefaultPaymentMethod's path parameter is `id`, decoded to a PaymentMethodId
  setDefaultPaymentMethod: (_userId, _input: { readonly params: { readonly name: string }; readonly body: unknown }) =>
    Effect.fail(new NotFound({ resource: "payment_method" }))
}

describe("the implementation map (packages/core/src/implementations.ts)", () => {
  it("implements every operation of the contract, and nothing else", () => {
    expect(Object.keys(accordImplementations).sort()).toStrictEqual(Object.keys(operations).sort())
  })

  it("types each implementation from its operation's declaration", () => {
    type SetDefault = Implementation<typeof operations.setDefaultPaymentMethod>
    expectTypeOf<Parameters<SetDefault>[0]>().toEqualTypeOf<UserId>()
    expectTypeOf<Parameters<SetDefault>[1]["params"]>().toEqualTypeOf<{ readonly id: PaymentMethodId }>()
    expectTypeOf<Effect.Error<ReturnType<SetDefault>>>().toEqualTypeOf<NotFound | PreconditionFailed | Unavailable>()
    type Liveness = Implementation<typeof operations.liveness>
    expectTypeOf<Parameters<Liveness>[0]>().toEqualTypeOf<undefined>()
    expectTypeOf<Effect.Error<ReturnType<Liveness>>>().toEqualTypeOf<never>()
  })
})
