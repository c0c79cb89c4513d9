// The public surface of @accord/domain, listed name by name: Accord's values, records, errors, ports and use cases.
// It imports effect (and CLDR data for canonical language tags) only: no wire form, no HTTP (docs/architecture.md).

// Values and validation (also the "./values" entry, without the rest)
export {
  boundedMemo,
  ClientId,
  decoderFor,
  describedAs,
  Email,
  emailKey,
  FIELD_ISSUE_CODE,
  FIELD_ISSUE_CODES,
  issue,
  isWellFormedLanguageTag,
  isWellFormedToken,
  LanguageTagInput,
  Password,
  PasswordHash,
  PaymentMethodId,
  resultDecoderFor,
  TimezoneOffset,
  TOKEN_PATTERN,
  toValidationError,
  trimAsciiWhitespace,
  UserId,
  type FieldIssue,
  type FieldIssueCode
} from "./values/index.js"
export { canonicalLanguageTag, LanguageTag } from "./language-tag.js"

// Records
export { notBefore } from "./timestamp.js"
export { Principal } from "./principal.js"
export type { PlanEntry, PlanEntrySignUp } from "./plan-entry.js"
export {
  applyMerge,
  newMergeRecord,
  sameVersion,
  type Merge,
  type MergeKind,
  type MergeRecord,
  type MergeRecordStore
} from "./merge-record.js"
export {
  applyPatch,
  defaultPreferenceValues,
  PreferencesKind,
  preferencesMerge,
  type PreferenceFields,
  type Preferences,
  type PreferencesPatch
} from "./preferences.js"
export type { PaymentMethod } from "./payment-method.js"
export { Seed, type SeedInput, type SeedReport } from "./seed.js"
export {
  defaultPaymentMethodChanged,
  DOMAIN_EVENTS,
  ownerOf,
  planEntryCreated,
  preferencesUpdated,
  readStoredEvent,
  storedEventOf,
  subjectOf,
  type Change,
  type DefaultPaymentMethodChanged,
  type DomainEvent,
  type DomainEventType,
  type EventOf,
  type PlanEntryCreated,
  type PreferencesChanges,
  type PreferencesUpdated,
  type RecordedEvent
} from "./events.js"
export { isIssuedEventId, newEventId } from "./event-id.js"

// Errors: tagged, without HTTP (the contract gives each tag its statuses and problem codes)
export {
  InsufficientScope,
  NotFound,
  PreconditionFailed,
  Unauthenticated,
  Unavailable,
  UnknownCursor,
  ValidationError,
  type DomainError
} from "./errors.js"

// Ports, and the services a store and the use cases need
export { Authenticator } from "./ports/authenticator.js"
export { DeliveryFailed, type EventSink } from "./ports/event-sink.js"
export {
  EventStore,
  type DeliveryStatus,
  type PendingDelivery,
  type Settlement,
  type SinkBacklog
} from "./ports/event-store.js"
export { PasswordHasher } from "./ports/password-hasher.js"
export { PaymentMethods } from "./ports/payment-methods.js"
export { PlanEntries } from "./ports/plan-entries.js"
export { PreferencesStore } from "./ports/preferences-store.js"
export { StoreAdmin } from "./ports/store-admin.js"
export { withPortSpans } from "./ports/traced-ports.js"
export type { AccordServices, StoreServices } from "./services.js"

// Use cases
export { createPublicPlanEntry } from "./use-cases/create-public-plan-entry.js"
export { getLanguagePreferences, updateLanguagePreferences } from "./use-cases/language-preferences.js"
export { listPaymentMethods, setDefaultPaymentMethod } from "./use-cases/payment-methods.js"
export { listUserEvents } from "./use-cases/events.js"
export { EventWakeups } from "./event-wakeups.js"
export {
  exponentialBackoff,
  relayEvents,
  relayOnce,
  type RelayObserver,
  type RelayOptions
} from "./use-cases/relay-events.js"
export { pruneDeliveredEvents, pruneDeliveredOnce, type PruneOptions } from "./use-cases/prune-events.js"
