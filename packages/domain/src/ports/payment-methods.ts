import { Context, type Effect } from "effect"
import type { NotFound, PreconditionFailed, Unavailable } from "../errors.js"
import type { UserId } from "../values/ids.js"
import type { PaymentMethodId } from "../values/payment-method-id.js"
import type { DomainEvent } from "../events.js"
import type { PaymentMethod } from "../payment-method.js"

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
     * With `precondition`: PreconditionFailed, and nothing changed, when the method as it is just before the change
     * does not meet it; checked under the same lock as the change (an HTTP If-Match, docs/api.md, "Conditional
     * requests"). When the default really moved, the events `events(previous, chosen)` gives (`previous`: the default it
     * replaced, if any) are recorded in the same atomic step; none otherwise.
     */
    readonly setDefault: (
      userId: UserId,
      id: PaymentMethodId,
      now: Date,
      events: (previous: PaymentMethod | undefined, chosen: PaymentMethod) => ReadonlyArray<DomainEvent>,
      precondition?: (current: PaymentMethod) => boolean
    ) => Effect.Effect<PaymentMethod, NotFound | PreconditionFailed | Unavailable>
  }
>()("@accord/domain/PaymentMethods") {}
