import { Effect, Option, Schema } from "effect"
import { decoderFor } from "../domain/decode.js"
import { NotFound } from "../domain/errors.js"
import { PaymentMethodId, type UserId } from "../domain/ids.js"
import { SetDefaultBody } from "../domain/payment-method.js"
import { PaymentMethods } from "../ports/payment-methods.js"
import { now } from "./now.js"

const decodeBody = decoderFor(SetDefaultBody)
const parseId = Schema.decodeUnknownOption(PaymentMethodId)

// Untraced: these run once per request, and a span with its stack capture costs more than the use case itself
// (bench/RESULTS.md). A host that wants a span wraps the call: `Effect.withSpan(setDefaultPaymentMethod(...), name)`.

/** The user's payment methods, ordered by id. */
export const listPaymentMethods = Effect.fnUntraced(function* (userId: UserId) {
  const methods = yield* PaymentMethods
  return yield* methods.listByUser(userId)
})

/**
 * Makes one of the user's payment methods the default. Body: none, `{}` or `{"is_default": true}`. An id outside
 * the id charset, unknown, or another user's is NotFound (never a hint that it exists). Idempotent.
 */
export const setDefaultPaymentMethod = Effect.fnUntraced(function* (
  userId: UserId,
  id: string,
  input: unknown = {}
) {
  yield* decodeBody(input ?? {})
  const methodId = yield* Option.match(parseId(id), {
    onNone: () => Effect.fail(new NotFound({ resource: "payment_method" })),
    onSome: Effect.succeed
  })
  const methods = yield* PaymentMethods
  return yield* methods.setDefault(userId, methodId, yield* now)
})
