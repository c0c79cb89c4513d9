import { Effect, HashMap, Option, Ref } from "effect"
import {
  type DomainEvent,
  notBefore,
  NotFound,
  type PaymentMethod,
  type PaymentMethodId,
  PaymentMethods,
  PreconditionFailed,
  type UserId
} from "@accord/domain"
import type { MemoryEventLog } from "./events.js"
import type { MemoryState, PaymentMethodsState } from "./state.js"

/** Payment method ids are ASCII (`[A-Za-z0-9_-]`), so UTF-16 order is code-point order here. */
export const byId = (a: PaymentMethod, b: PaymentMethod): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

const methodsOf = (state: PaymentMethodsState, userId: UserId): ReadonlyArray<PaymentMethod> =>
  Option.getOrElse(HashMap.get(state.byUser, userId), () => [])

const notFound = new NotFound({ resource: "payment_method" })

/** A copy with the default flag changed; a literal rather than a spread, since every set-default writes one or two. */
const withDefault = (method: PaymentMethod, isDefault: boolean, now: Date): PaymentMethod => ({
  id: method.id,
  userId: method.userId,
  isDefault,
  createdAt: method.createdAt,
  updatedAt: notBefore(now, method.updatedAt)
})

/**
 * Makes `id` the user's only default in one state transition: there is no state in which the old default is still
 * set and the new one is too, nor one with neither when a default existed.
 */
const setDefaultIn = (
  state: PaymentMethodsState,
  log: MemoryEventLog,
  userId: UserId,
  id: PaymentMethodId,
  now: Date,
  events: (previous: PaymentMethod | undefined, chosen: PaymentMethod) => ReadonlyArray<DomainEvent>,
  precondition: ((current: PaymentMethod) => boolean) | undefined
): readonly [Effect.Effect<PaymentMethod, NotFound | PreconditionFailed>, PaymentMethodsState] => {
  const methods = methodsOf(state, userId)
  const target = methods.find((method) => method.id === id)
  if (target === undefined) return [Effect.fail(notFound), state]
  if (precondition !== undefined && !precondition(target)) return [Effect.fail(new PreconditionFailed()), state]
  if (target.isDefault) return [Effect.succeed(target), state]
  const chosen = withDefault(target, true, now)
  log.append(
    events(
      methods.find((method) => method.isDefault),
      chosen
    )
  )
  const next = methods.map((method) =>
    method.id === id ? chosen : method.isDefault ? withDefault(method, false, now) : method
  )
  return [Effect.succeed(chosen), { ...state, byUser: HashMap.set(state.byUser, userId, next) }]
}

/** Adds a method unless its id is taken (by anyone); a default is only honoured when the user has none yet. */
export const insertIfAbsent = (
  state: PaymentMethodsState,
  method: { readonly id: PaymentMethodId; readonly userId: UserId; readonly isDefault: boolean },
  now: Date
): readonly [added: boolean, next: PaymentMethodsState] => {
  if (HashMap.has(state.owners, method.id)) return [false, state]
  const methods = methodsOf(state, method.userId)
  const isDefault = method.isDefault && !methods.some((existing) => existing.isDefault)
  const added: PaymentMethod = { id: method.id, userId: method.userId, isDefault, createdAt: now, updatedAt: now }
  return [
    true,
    {
      owners: HashMap.set(state.owners, method.id, method.userId),
      byUser: HashMap.set(state.byUser, method.userId, [...methods, added].sort(byId))
    }
  ]
}

export const makePaymentMethods = (state: MemoryState) =>
  PaymentMethods.of({
    listByUser: (userId) => Effect.map(Ref.get(state.paymentMethods), (current) => methodsOf(current, userId)),
    setDefault: (userId, id, now, events, precondition) =>
      Effect.flatMap(
        Ref.modify(state.paymentMethods, (current) =>
          setDefaultIn(current, state.events, userId, id, now, events, precondition)
        ),
        (outcome) => outcome
      )
  })
