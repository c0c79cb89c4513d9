import { Effect, ManagedRuntime, Schema } from "effect"
import { DeliveryFailed, relayOnce, Seed, updateLanguagePreferences, UserId, type EventSink } from "@accord/domain"
import { toEventEnvelope } from "@accord/contract"
import { makeMemoryStore } from "@accord/store-memory"

// The host's own destination for Accord's events: here an array standing in for its queue, bus or outbox.
const queue: Array<string> = []
const hostQueue: EventSink = {
  // Stable across restarts: a store keeps this sink's progress (its deliveries, attempts, back-off) by this name.
  name: "host-queue",
  // Succeeds once the destination has the event; a failure is retried later, with back-off (at least once).
  deliver: (event) =>
    queue.length < 1000
      ? Effect.sync(() => void queue.push(JSON.stringify(toEventEnvelope(event))))
      : Effect.fail(new DeliveryFailed({ reason: "queue full" }))
}

const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_1", token: "dev-token-u1" }] })
const runtime = ManagedRuntime.make(makeMemoryStore(seed))
await runtime.runPromise(updateLanguagePreferences(UserId.make("u_1"), { language: "de-AT" }))

// One pass over what is due; a host runs `relayEvents({ sinks: [hostQueue] })` instead, forked for as long as it runs.
await runtime.runPromise(relayOnce({ sinks: [hostQueue] }))
console.log(queue.map((message) => JSON.parse(message).type))
// [ 'preferences.updated' ]
await runtime.dispose()
