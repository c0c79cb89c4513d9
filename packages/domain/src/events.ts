import { Exit, Schema } from "effect"
import { LanguageTag } from "./language-tag.js"
import type { PaymentMethod } from "./payment-method.js"
import type { PlanEntry } from "./plan-entry.js"
import type { Preferences } from "./preferences.js"
import { Email, emailKey } from "./values/email.js"
import { UserId } from "./values/ids.js"
import { PaymentMethodId } from "./values/payment-method-id.js"
import { TimezoneOffset } from "./values/timezone.js"

// Domain events: what a committed change tells the rest of a company's systems (docs/api.md, "Events"). The use
// cases decide them with the change, the stores persist them in the change's own atomic step, and nothing else
// invents one. None carries a password, a token or a digest: only the values the change is about.

/** One field's value before and after a change. */
export interface Change<A> {
  readonly old: A
  readonly new: A
}

const ChangeOf = <S extends Schema.Top>(value: S) => Schema.Struct({ old: value, new: value })

/**
 * Every event type, by its `type`: the Schema of what it records, its instant apart (`at`, which every event has). The
 * values are already checked (their `Type` side), as the use case made them. A store keeps an event as this Schema's
 * JSON and reads it back with it (`readStoredEvent`); the contract's `EVENTS` gives each type its wire form, and a type
 * without its entry there does not compile.
 */
export const DOMAIN_EVENTS = {
  /** A plan entry was created (a second entry with a known email is a no-op and records none). */
  "plan_entry.created": Schema.Struct({ type: Schema.Literal("plan_entry.created"), email: Schema.toType(Email) }),
  /** A user's preferences changed (a PUT that changes nothing records none); at least one field is present. */
  "preferences.updated": Schema.Struct({
    type: Schema.Literal("preferences.updated"),
    userId: Schema.toType(UserId),
    changes: Schema.Struct({
      language: Schema.optionalKey(ChangeOf(Schema.toType(LanguageTag))),
      timezone: Schema.optionalKey(ChangeOf(Schema.toType(TimezoneOffset))),
      mfaEnabled: Schema.optionalKey(ChangeOf(Schema.Boolean))
    })
  }),
  /** A user's default payment method changed (setting the current default again records none); `previousDefault`: the one it replaced, or null. */
  "payment_method.default_changed": Schema.Struct({
    type: Schema.Literal("payment_method.default_changed"),
    userId: Schema.toType(UserId),
    paymentMethodId: Schema.toType(PaymentMethodId),
    previousDefault: Schema.NullOr(Schema.toType(PaymentMethodId))
  })
} as const

export type DomainEventType = keyof typeof DOMAIN_EVENTS

/** An event of type `T`: what its Schema records, and when the change was made. */
export type EventOf<T extends DomainEventType> = (typeof DOMAIN_EVENTS)[T]["Type"] & { readonly at: Date }

export type PlanEntryCreated = EventOf<"plan_entry.created">
export type PreferencesUpdated = EventOf<"preferences.updated">
export type DefaultPaymentMethodChanged = EventOf<"payment_method.default_changed">

/** The preferences fields a change moved, each with its old and new value; at least one is present. */
export type PreferencesChanges = PreferencesUpdated["changes"]

export type DomainEvent = { readonly [T in DomainEventType]: EventOf<T> }[DomainEventType]

/** Each type's reader of what a store kept: its Schema's decoder, made once. */
const readers: Readonly<Record<string, (input: unknown) => Exit.Exit<unknown, unknown>>> = Object.fromEntries(
  Object.entries(DOMAIN_EVENTS).map(([type, schema]) => [type, Schema.decodeUnknownExit(schema)])
)

/** What a store keeps of an event: everything but its instant (a column of its own), as JSON. */
export const storedEventOf = (event: DomainEvent): Omit<DomainEvent, "at"> => {
  const { at: _at, ...rest } = event
  return rest
}

/**
 * An event read back from what a store kept (`storedEventOf`'s JSON) and its instant, or why it cannot be: a type this
 * version does not know (a newer one wrote it), or values its type's Schema refuses. The store skips such a row and
 * reports it (one bad row never breaks a listing).
 */
export const readStoredEvent = (
  stored: unknown,
  at: Date
): { readonly ok: true; readonly event: DomainEvent } | { readonly ok: false; readonly why: string } => {
  const type = typeof stored === "object" && stored !== null && "type" in stored ? stored.type : undefined
  if (typeof type !== "string" || !Object.hasOwn(readers, type))
    return { ok: false, why: `no event type ${JSON.stringify(type)} in this version` }
  const read = readers[type]?.(stored)
  if (read === undefined || Exit.isFailure(read))
    return { ok: false, why: `a ${type} event whose values its Schema refuses` }
  // The Schema of its own type read it: an event of that type but for its instant.
  return { ok: true, event: { ...(read.value as Omit<DomainEvent, "at">), at } as DomainEvent }
}

/**
 * An event as a store keeps it: the domain's value, stamped in the change's atomic step with an id that sorts by
 * creation (a UUIDv7) and its subject's next sequence number (1, 2, 3, ... per subject, no gap, no repeat).
 */
export interface RecordedEvent {
  readonly id: string
  readonly subject: string
  readonly sequence: number
  readonly event: DomainEvent
}

/**
 * What an event is about: the user for a user's change (so a subject's sequence orders all of that user's events),
 * the address's key for a plan entry.
 */
export const subjectOf = (event: DomainEvent): string =>
  event.type === "plan_entry.created" ? `plan_entries/${emailKey(event.email)}` : `users/${event.userId}`

/** The user whose feed lists the event, if any (a plan entry has no user). */
export const ownerOf = (event: DomainEvent): UserId | undefined =>
  event.type === "plan_entry.created" ? undefined : event.userId

/** The event a stored plan entry records. */
export const planEntryCreated = (entry: PlanEntry): PlanEntryCreated => ({
  type: "plan_entry.created",
  email: entry.email,
  at: entry.createdAt
})

/** The event a preferences change records, or none when no value moved (a store persists `after` only then). */
export const preferencesUpdated = (
  userId: UserId,
  before: Preferences,
  after: Preferences
): ReadonlyArray<PreferencesUpdated> => {
  const changes: { -readonly [K in keyof PreferencesChanges]: PreferencesChanges[K] } = {}
  if (before.language !== after.language) changes.language = { old: before.language, new: after.language }
  if (before.timezone !== after.timezone) changes.timezone = { old: before.timezone, new: after.timezone }
  if (before.mfaEnabled !== after.mfaEnabled) changes.mfaEnabled = { old: before.mfaEnabled, new: after.mfaEnabled }
  if (changes.language === undefined && changes.timezone === undefined && changes.mfaEnabled === undefined) return []
  return [{ type: "preferences.updated", userId, changes, at: after.updatedAt }]
}

/** The event a new default records: the store calls it only when the default really moved. */
export const defaultPaymentMethodChanged = (
  previous: PaymentMethod | undefined,
  chosen: PaymentMethod
): DefaultPaymentMethodChanged => ({
  type: "payment_method.default_changed",
  userId: chosen.userId,
  paymentMethodId: chosen.id,
  previousDefault: previous?.id ?? null,
  at: chosen.updatedAt
})
