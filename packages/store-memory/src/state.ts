import { Effect, HashMap, Ref } from "effect"
import type { PaymentMethod, PaymentMethodId, PlanEntry, PreferenceFields, Principal, UserId } from "@accord/domain"
import { MemoryEventLog } from "./events.js"
import { emptyMergeRecords, type MergeRecordsState } from "./merge-records.js"

/** A credential as the store keeps it: the SHA-256 digest of the token, never the token itself. */
export interface StoredCredential {
  readonly digest: string
  /** The same digest as bytes, for the constant-time comparison that ends every lookup. */
  readonly digestBytes: Uint8Array
  readonly principal: Principal
}

export interface PaymentMethodsState {
  /** Ids are unique across users; this says whose each one is. */
  readonly owners: HashMap.HashMap<PaymentMethodId, UserId>
  /** Each user's methods, kept sorted by id so a listing is a plain read. */
  readonly byUser: HashMap.HashMap<UserId, ReadonlyArray<PaymentMethod>>
}

/**
 * All of a memory store's data, one immutable value per area behind a Ref. Every write is a single `Ref.modify`,
 * so it is atomic however fibers interleave, and every read sees a state some write left whole (a user never has
 * two defaults, not even for an instant).
 */
export interface MemoryState {
  readonly planEntries: Ref.Ref<HashMap.HashMap<string, PlanEntry>>
  readonly preferences: Ref.Ref<MergeRecordsState<PreferenceFields>>
  readonly paymentMethods: Ref.Ref<PaymentMethodsState>
  /** Keyed by token digest. */
  readonly credentials: Ref.Ref<HashMap.HashMap<string, StoredCredential>>
  /** The events the writes recorded, each appended inside its write's `Ref.modify` (docs/api.md, "Events"). */
  readonly events: MemoryEventLog
}

export const makeMemoryState: Effect.Effect<MemoryState> = Effect.all({
  planEntries: Ref.make(HashMap.empty<string, PlanEntry>()),
  preferences: Ref.make(emptyMergeRecords<PreferenceFields>()),
  paymentMethods: Ref.make<PaymentMethodsState>({ owners: HashMap.empty(), byUser: HashMap.empty() }),
  credentials: Ref.make(HashMap.empty<string, StoredCredential>()),
  events: Effect.sync(() => new MemoryEventLog())
})
