import type { DomainEvent, DomainEventType, EventOf, RecordedEvent } from "@accord/domain"
import { Schema } from "effect"
import { Timestamp, toTimestamp } from "./wire/timestamp.js"
import { WireInt } from "./wire/wire-int.js"

// docs/api.md, "Events": the events as data, beside the operations. Each has its wire data's Schema and mapper, its
// text and an example; the envelope (CloudEvents 1.0, JSON format), the feed's page, the OpenAPI document's `webhooks` and
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

/** One event type's wire form: the Schema of its `data`, and its `data` made from the domain's event. */
export interface WireEvent<T extends DomainEventType, S extends Schema.Top> {
  readonly data: S
  readonly toData: (event: EventOf<T>) => S["Type"]
}

/** An entry, its `toData` checked against its own `data` Schema. */
const wireEvent = <T extends DomainEventType, S extends Schema.Top>(entry: WireEvent<T, S>): WireEvent<T, S> => entry

/**
 * Every event type of the domain (`DOMAIN_EVENTS`), by its `type`: the Schema of its `data` and how the domain's event
 * becomes it (its text and example: `EVENT_DOCS`, event-docs.ts). A type without its entry does not compile.
 */
export const EVENTS = {
  "plan_entry.created": wireEvent({ data: PlanEntryCreatedData, toData: (event) => ({ email: event.email }) }),
  "preferences.updated": wireEvent({
    data: PreferencesUpdatedData,
    toData: ({ changes: { language, timezone, mfaEnabled } }) => ({
      changes: {
        ...(language !== undefined && { language: { old: language.old, new: language.new } }),
        ...(timezone !== undefined && { timezone: { old: timezone.old, new: timezone.new } }),
        ...(mfaEnabled !== undefined && { mfa_enabled: { old: mfaEnabled.old, new: mfaEnabled.new } })
      }
    })
  }),
  "payment_method.default_changed": wireEvent({
    data: DefaultPaymentMethodChangedData,
    toData: (event) => ({ payment_method_id: event.paymentMethodId, previous_default_id: event.previousDefault })
  })
} as const satisfies { readonly [T in DomainEventType]: WireEvent<T, Schema.Top> }

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
  }).annotate({
    // Its data's name, as an event's (`PlanEntryCreatedData`: `PlanEntryCreatedEvent`).
    identifier: String(EVENTS[type].data.ast.annotations?.["identifier"]).replace(/Data$/, "Event")
  })

type Envelopes = { readonly [T in EventType]: ReturnType<typeof envelopeOf<T>> }

/** Each type's envelope Schema, by type (the OpenAPI webhooks'). */
export const EVENT_ENVELOPES: Envelopes = /* @__PURE__ */ Object.fromEntries(
  EVENT_TYPES.map((type) => [type, envelopeOf(type)])
) as Envelopes

/** Any event, as a webhook's body, a NATS message and a feed's item carry it; narrowed by `type`. */
export const AccordEvent = /* @__PURE__ */ Schema.Union(EVENT_TYPES.map((type) => EVENT_ENVELOPES[type])).annotate({
  identifier: "Event"
})
export type AccordEvent = typeof AccordEvent.Type

/** A page of the events feed: oldest first; `has_more` when a next page (after the last id) has some. */
export const EventPage = Schema.Struct({ data: Schema.Array(AccordEvent), has_more: Schema.Boolean }).annotate({
  identifier: "EventPage"
})
export type EventPage = typeof EventPage.Type

/**
 * The wire envelope of a recorded event: the feed's item, a webhook's body, a NATS message; its members in the order
 * CloudEvents lists them (the feed's bytes keep it), its `data` its type's (`EVENTS`).
 */
export const toEventEnvelope = (recorded: RecordedEvent): AccordEvent => {
  const event = recorded.event
  // Each type's `toData` takes its own type's events: the event's type picks it.
  const toData = EVENTS[event.type].toData as (event: DomainEvent) => unknown
  return {
    specversion: "1.0",
    id: recorded.id,
    source: EVENT_SOURCE,
    type: event.type,
    time: toTimestamp(event.at),
    subject: recorded.subject,
    sequence: recorded.sequence,
    datacontenttype: "application/json",
    data: toData(event)
  } as AccordEvent
}
