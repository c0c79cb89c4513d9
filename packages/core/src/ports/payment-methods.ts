import { Context, type Effect } from "effect"
import type { NotFound, Unavailable } from "../domain/errors.js"
import type { PaymentMethodId, UserId } from "../domain/ids.js"
import type { PaymentMethod } from "../domain/payment-method.js"

/** A user's payment methods. Invariant: at most one default per user at every instant. */
export class PaymentMethods extends Context.Service<
  PaymentMethods,
  {
    /** The user's methods ordered by id in code-point order. */
    readonly listByUser: (userId: UserId) => Effect.Effect<ReadonlyArray<PaymentMethod>, Unavailable>
    /**
     * Atomically makes `id` the user's only default. NotFound when the method does not exist or is another user's.
     * Already the default: returns it unchanged. Otherwise the previous default (if any) and this method get
     * `updatedAt = now`, or keep their own when it is later (a call that waited for another never moves it back).
     */
    readonly setDefault: (
      userId: UserId,
      id: PaymentMethodId,
      now: Date
    ) => Effect.Effect<PaymentMethod, NotFound | Unavailable>
  }
>()("@accord/core/PaymentMethods") {}
