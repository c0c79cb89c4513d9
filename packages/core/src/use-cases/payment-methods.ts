import { Effect, Option, Schema } from "effect"
import { decoderFor } from "../domain/decode.js"
import { NotFound, type Unavailable, type ValidationError } from "../domain/errors.js"
import { PaymentMethodId, type UserId } from "../domain/ids.js"
import { SetDefaultBody, type PaymentMethod } from "../domain/payment-method.js"
import { PaymentMethods } from "../ports/payment-methods.js"
import { now } from "./now.js"

const decodeBody = decoderFor(SetDefaultBody)
const parseId = Schema.decodeUnknownOption(PaymentMethodId)

// Plain pipelines, no span: these run once per request, and a generator's steps and a span with its stack capture
// cost more than the use case itself (bench/RESULTS.md). A host that wants a span wraps the call:
// `Effect.withSpan(setDefaultPaymentMethod(...), name)`.

/** The user's payment methods, ordered by id. */
export const listPaymentMethods = (
  userId: UserId
): Effect.Effect<ReadonlyArray<PaymentMethod>, Unavailable, PaymentMethods> =>
  Effect.flatMap(PaymentMethods, (methods) => methods.listByUser(userId))

const notFound = new NotFound({ resource: "payment_method" })

/**
 * Makes one of the user's payment methods the default. Body: none, `{}` or `{"is_default": true}`. An id outside
 * the id charset, unknown, or another user's is NotFound (never a hint that it exists). Idempotent.
 */
export const setDefaultPaymentMethod = (
  userId: UserId,
  id: string,
  input: unknown = {}
): Effect.Effect<PaymentMethod, ValidationError | NotFound | Unavailable, PaymentMethods> =>
  Effect.flatMap(decodeBody(input ?? {}), () => {
    const methodId = parseId(id)
    if (Option.isNone(methodId)) return Effect.fail(notFound)
    return Effect.flatMap(PaymentMethods, (methods) =>
      Effect.flatMap(now, (at) => methods.setDefault(userId, methodId.value, at))
    )
  })
