import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { type AccordServices, listPaymentMethods, NotFound, type UserId } from "@accord/domain"
import { toPaymentMethodView } from "@accord/contract"
import { alice, bob, issuesOf, seed, TestServices, fromWire } from "./support.js"

const EPOCH = "1970-01-01T00:00:00.000Z"
const ONE_MINUTE_LATER = "1970-01-01T00:01:00.000Z"

/** Alice has pm_1 (default) and pm_2; Bob has pm_bob. */
const seeded = seed({
  payment_methods: [
    { id: "pm_1", user_id: alice, is_default: true },
    { id: "pm_2", user_id: alice },
    { id: "pm_bob", user_id: bob }
  ]
})

const views = (userId: UserId) => Effect.map(listPaymentMethods(userId), (methods) => methods.map(toPaymentMethodView))

const run = <A, E>(effect: Effect.Effect<A, E, AccordServices>) =>
  Effect.andThen(seeded, effect).pipe(Effect.provide(TestServices))

describe("setDefaultPaymentMethod", () => {
  it.effect("makes the method the only default; the previous default gets a new updated_at", () =>
    run(
      Effect.gen(function* () {
        yield* TestClock.adjust("1 minute")
        const chosen = yield* fromWire.setDefaultPaymentMethod(alice, "pm_2", { is_default: true })
        expect(toPaymentMethodView(chosen)).toEqual({
          id: "pm_2",
          is_default: true,
          created_at: EPOCH,
          updated_at: ONE_MINUTE_LATER
        })
        expect(yield* views(alice)).toEqual([
          { id: "pm_1", is_default: false, created_at: EPOCH, updated_at: ONE_MINUTE_LATER },
          { id: "pm_2", is_default: true, created_at: EPOCH, updated_at: ONE_MINUTE_LATER }
        ])
        expect(yield* views(bob)).toEqual([{ id: "pm_bob", is_default: false, created_at: EPOCH, updated_at: EPOCH }])
      })
    )
  )

  it.effect.each([
    ["no body", undefined],
    ["{}", {}],
    ['{"is_default": true}', { is_default: true }]
  ])("accepts %s", ([, body]) =>
    run(
      Effect.gen(function* () {
        expect((yield* fromWire.setDefaultPaymentMethod(alice, "pm_2", body)).isDefault).toBe(true)
      })
    )
  )

  it.effect("is idempotent: repeating it returns the same method with the same updated_at", () =>
    run(
      Effect.gen(function* () {
        yield* TestClock.adjust("1 minute")
        const first = toPaymentMethodView(yield* fromWire.setDefaultPaymentMethod(alice, "pm_2"))
        const listed = yield* views(alice)
        yield* TestClock.adjust("1 minute")
        expect(toPaymentMethodView(yield* fromWire.setDefaultPaymentMethod(alice, "pm_2"))).toEqual(first)
        expect(yield* views(alice)).toEqual(listed)
      })
    )
  )

  it.effect("setting the current default changes nothing", () =>
    run(
      Effect.gen(function* () {
        const before = yield* views(alice)
        yield* TestClock.adjust("1 minute")
        expect(toPaymentMethodView(yield* fromWire.setDefaultPaymentMethod(alice, "pm_1"))).toEqual(before[0])
        expect(yield* views(alice)).toEqual(before)
      })
    )
  )

  it.effect("another user's method is NotFound, and nothing changes", () =>
    run(
      Effect.gen(function* () {
        const error = yield* Effect.flip(fromWire.setDefaultPaymentMethod(alice, "pm_bob"))
        expect(error).toBeInstanceOf(NotFound)
        expect(yield* views(bob)).toEqual([{ id: "pm_bob", is_default: false, created_at: EPOCH, updated_at: EPOCH }])
        expect((yield* views(alice)).map((method) => method.is_default)).toEqual([true, false])
      })
    )
  )

  it.effect.each([
    ["an unknown id", "pm_3"],
    ["a 100-character unknown id", "p".repeat(100)],
    ["an empty id", ""],
    ["a 101-character id", "p".repeat(101)],
    ["a dot", "pm.1"],
    ["a space", "pm 1"],
    ["a slash", "pm/1"],
    ["a percent-encoded id", "pm%5F1"],
    ["a non-ASCII id", "pm_ü"],
    ["an id that differs only by case", "PM_1"]
  ] as const)("%s is NotFound", ([, id]) =>
    run(
      Effect.gen(function* () {
        const error = yield* Effect.flip(fromWire.setDefaultPaymentMethod(alice, id))
        expect(error).toBeInstanceOf(NotFound)
        expect(error).toMatchObject({ resource: "payment_method" })
      })
    )
  )

  it.effect.each([
    ['{"is_default": false}', { is_default: false }, [["/is_default", "not_allowed"]]],
    ['{"is_default": "true"}', { is_default: "true" }, [["/is_default", "invalid_type"]]],
    ['{"is_default": 1}', { is_default: 1 }, [["/is_default", "invalid_type"]]],
    ['{"is_default": null}', { is_default: null }, [["/is_default", "invalid_type"]]],
    ["another field", { name: "x" }, [["/name", "unknown_field"]]],
    ["another field beside is_default: true", { is_default: true, nickname: "x" }, [["/nickname", "unknown_field"]]]
  ] as const)("rejects %s", ([, body, expected]) =>
    run(
      Effect.gen(function* () {
        expect(yield* issuesOf(fromWire.setDefaultPaymentMethod(alice, "pm_2", body))).toEqual(expected)
        expect((yield* views(alice)).map((method) => method.is_default)).toEqual([true, false])
      })
    )
  )

  it.effect("the body is checked before the id (shape and fields come before the use case)", () =>
    run(
      Effect.gen(function* () {
        expect(
          yield* issuesOf(fromWire.setDefaultPaymentMethod(alice, "not a valid id", { is_default: false }))
        ).toEqual([["/is_default", "not_allowed"]])
      })
    )
  )
})

describe("listPaymentMethods", () => {
  it.effect("lists only the caller's methods, ordered by id in code-point order", () =>
    Effect.gen(function* () {
      yield* seed({
        payment_methods: ["B", "a", "_", "-", "0"].map((id) => ({ id, user_id: alice }))
      })
      expect((yield* views(alice)).map((method) => method.id)).toEqual(["-", "0", "B", "_", "a"])
      expect(yield* views(bob)).toEqual([])
    }).pipe(Effect.provide(TestServices))
  )
})
