import type { LanguageTag } from "./language-tag.js"
import type { PaymentMethod } from "./payment-method.js"
import type { PlanEntry } from "./plan-entry.js"
import type { Preferences } from "./preferences.js"
import { emailKey, type Email } from "./values/email.js"
import type { UserId } from "./values/ids.js"
import type { PaymentMethodId } from "./values/payment-method-id.js"
import type { TimezoneOffset } from "./values/timezone.js"

// Domain events: what a committed change tells the rest of a company's systems (docs/api.md, "Events"). The use
// cases decide them with the change, the stores persist them in the change's own atomic step, and nothing else
// invents one. None carries a password, a token or a digest: only the values the change is about.

/** A plan entry was created (a second entry with a known email is a no-op and records none). */
export interface PlanEntryCreated {
  readonly type: "plan_entry.created"
  readonly email: Email
  readonly at: Date
}

/** One field's value before and after a change. */
export interface Change<A> {
  readonly old: A
  readonly new: A
}

/** The preferences fields a change moved, each with its old and new value; at least one is present. */
export interface PreferencesChanges {
  readonly language?: Change<LanguageTag>
  readonly timezone?: Change<TimezoneOffset>
  readonly mfaEnabled?: Change<boolean>
}

/** A user's preferences changed (a PUT that changes nothing records none). */
export interface PreferencesUpdated {
  readonly type: "preferences.updated"
  readonly userId: UserId
  readonly changes: PreferencesChanges
  readonly at: Date
}

/** A user's default payment method changed (setting the current default again records none). */
export interface DefaultPaymentMethodChanged {
  readonly type: "payment_method.default_changed"
  readonly userId: UserId
  readonly paymentMethodId: PaymentMethodId
  /** The default it replaced, or null when the user had none. */
  readonly previousDefault: PaymentMethodId | null
  readonly at: Date
}

export type DomainEvent = PlanEntryCreated | PreferencesUpdated | DefaultPaymentMethodChanged
export type DomainEventType = DomainEvent["type"]

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
  const changes: {
    language?: Change<LanguageTag>
    timezone?: Change<TimezoneOffset>
    mfaEnabled?: Change<boolean>
  } = {}
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
