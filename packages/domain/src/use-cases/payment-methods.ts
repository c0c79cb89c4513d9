import { Effect } from "effect"
import type { NotFound, PreconditionFailed, Unavailable } from "../errors.js"
import type { UserId } from "../values/ids.js"
import type { PaymentMethodId } from "../values/payment-method-id.js"
import type { PaymentMethod } from "../payment-method.js"
import { defaultPaymentMethodChanged } from "../events.js"
import { PaymentMethods } from "../ports/payment-methods.js"
import { now } from "./now.js"

// Plain pipelines, no span: these run once per request, and a generator's steps and a span with its stack capture
// cost more than the use case itself (bench/RESULTS.md). A tracing host wraps every use case in a span named by its
// operation (docs/operations.md, "Traces").

/** The user's payment methods, ordered by id. */
export const listPaymentMethods = (
  userId: UserId
): Effect.Effect<ReadonlyArray<PaymentMethod>, Unavailable, PaymentMethods> =>
  Effect.flatMap(PaymentMethods, (methods) => methods.listByUser(userId))

const recordDefaultChange = (previous: PaymentMethod | undefined, chosen: PaymentMethod) => [
  defaultPaymentMethodChanged(previous, chosen)
]

/**
 * Makes one of the user's payment methods the default. An unknown id, or another user's, is NotFound (never a hint
 * that it exists). Idempotent. `precondition`: the method as it is must meet it, checked atomically with the change
 * (PreconditionFailed otherwise, nothing changed).
 */
export const setDefaultPaymentMethod = (
  userId: UserId,
  id: PaymentMethodId,
  precondition?: (current: PaymentMethod) => boolean
): Effect.Effect<PaymentMethod, NotFound | PreconditionFailed | Unavailable, PaymentMethods> =>
  Effect.flatMap(PaymentMethods, (methods) =>
    Effect.flatMap(now, (at) => methods.setDefault(userId, id, at, recordDefaultChange, precondition))
  )
