import type { DomainEvent, RecordedEvent } from "@accord/domain"
import { Schema } from "effect"
import { Timestamp, toTimestamp } from "./wire/timestamp.js"
import { WireInt } from "./wire/wire-int.js"

// docs/api.md, "Events": the events as data, beside the operations. Each has its wire data's Schema, its text and an
// example; the envelope (CloudEvents 1.0, JSON format), the feed's page, the OpenAPI document's `webhooks` and
// `verifyWebhook`'s typed union derive from this table. No event carries a password, a token or a digest.

/** One field's value before and after a change, in wire form. */
const ChangeOf = <S extends Schema.Top>(value: S) => Schema.Struct({ old: value, new: value })

const PlanEntryCreatedData = Schema.Struct({ email: Schema.String }).annotate({ identifier: "PlanEntryCreatedData" })

const PreferencesUpdatedData = Schema.Struct({
  changes: Schema.Struct({
    language: Schema.optionalKey(ChangeOf(Schema.String)),
    timezone: Schema.optionalKey(ChangeOf(WireInt)),
    mfa_enabled: Schema.optionalKey(ChangeOf(Schema.Boolean))
  })
}).annotate({ identifier: "PreferencesUpdatedData" })

const DefaultPaymentMethodChangedData = Schema.Struct({
  payment_method_id: Schema.String,
  previous_default_id: Schema.NullOr(Schema.String)
}).annotate({ identifier: "DefaultPaymentMethodChangedData" })

/** Every event type, by its `type`: the Schema of its `data` (its text and example: `EVENT_DOCS`, event-docs.ts). */
export const EVENTS = {
  "plan_entry.created": { data: PlanEntryCreatedData },
  "preferences.updated": { data: PreferencesUpdatedData },
  "payment_method.default_changed": { data: DefaultPaymentMethodChangedData }
} as const satisfies { readonly [T in DomainEvent["type"]]: { readonly data: Schema.Top } }

export type EventType = keyof typeof EVENTS

/** Every event type, in the table's order. */
export const EVENT_TYPES = /* @__PURE__ */ Object.keys(EVENTS) as ReadonlyArray<EventType>

/** The CloudEvents `source` of every event Accord sends (a URI-reference: the API it comes from). */
export const EVENT_SOURCE = "/api"

/** The CloudEvents envelope of one event type (JSON format), with the per-subject `sequence` extension attribute. */
const envelopeOf = <T extends EventType>(type: T) =>
  Schema.Struct({
    specversion: Schema.Literal("1.0"),
    /** Sorts by creation (a UUIDv7): a consumer deduplicates by it. */
    id: Schema.String,
    source: Schema.String,
    type: Schema.Literal(type),
    /** When the change was made. */
    time: Timestamp,
    subject: Schema.String,
    /** 1, 2, 3, ... per subject, in the order the changes were committed: no gap, no repeat. */
    sequence: WireInt,
    datacontenttype: Schema.Literal("application/json"),
    data: EVENTS[type].data as (typeof EVENTS)[T]["data"]
  })

const PlanEntryCreatedEvent = /* @__PURE__ */ envelopeOf("plan_entry.created").annotate({
  identifier: "PlanEntryCreatedEvent"
})
const PreferencesUpdatedEvent = /* @__PURE__ */ envelopeOf("preferences.updated").annotate({
  identifier: "PreferencesUpdatedEvent"
})
const DefaultPaymentMethodChangedEvent = /* @__PURE__ */ envelopeOf("payment_method.default_changed").annotate({
  identifier: "DefaultPaymentMethodChangedEvent"
})

/** Each type's envelope Schema, by type (the OpenAPI webhooks'). */
export const EVENT_ENVELOPES = {
  "plan_entry.created": PlanEntryCreatedEvent,
  "preferences.updated": PreferencesUpdatedEvent,
  "payment_method.default_changed": DefaultPaymentMethodChangedEvent
} as const satisfies { readonly [T in EventType]: Schema.Top }

/** Any event, as a webhook's body, a NATS message and a feed's item carry it; narrowed by `type`. */
export const AccordEvent = /* @__PURE__ */ Schema.Union([
  PlanEntryCreatedEvent,
  PreferencesUpdatedEvent,
  DefaultPaymentMethodChangedEvent
]).annotate({ identifier: "Event" })
export type AccordEvent = typeof AccordEvent.Type

/** A page of the events feed: oldest first; `has_more` when a next page (after the last id) has some. */
export const EventPage = Schema.Struct({ data: Schema.Array(AccordEvent), has_more: Schema.Boolean }).annotate({
  identifier: "EventPage"
})
export type EventPage = typeof EventPage.Type

/** The envelope around `data`, its members in the order CloudEvents lists them (the feed's bytes keep it). */
const envelope = <T extends EventType, D>(recorded: RecordedEvent, type: T, data: D) => ({
  specversion: "1.0" as const,
  id: recorded.id,
  source: EVENT_SOURCE,
  type,
  time: toTimestamp(recorded.event.at),
  subject: recorded.subject,
  sequence: recorded.sequence,
  datacontenttype: "application/json" as const,
  data
})

/** The wire envelope of a recorded event: the feed's item, a webhook's body, a NATS message. */
export const toEventEnvelope = (recorded: RecordedEvent): AccordEvent => {
  const event = recorded.event
  switch (event.type) {
    case "plan_entry.created":
      return envelope(recorded, event.type, { email: event.email })
    case "preferences.updated": {
      const { language, timezone, mfaEnabled } = event.changes
      return envelope(recorded, event.type, {
        changes: {
          ...(language !== undefined && { language: { old: language.old, new: language.new } }),
          ...(timezone !== undefined && { timezone: { old: timezone.old, new: timezone.new } }),
          ...(mfaEnabled !== undefined && { mfa_enabled: { old: mfaEnabled.old, new: mfaEnabled.new } })
        }
      })
    }
    case "payment_method.default_changed":
      return envelope(recorded, event.type, {
        payment_method_id: event.paymentMethodId,
        previous_default_id: event.previousDefault
      })
  }
}
