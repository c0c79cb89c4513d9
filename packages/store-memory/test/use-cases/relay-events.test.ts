import { afterEach, describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Fiber, Logger, ManagedRuntime } from "effect"
import {
  DeliveryFailed,
  EventStore,
  pruneDeliveredEvents,
  PreferencesStore,
  relayEvents,
  TimezoneOffset,
  UserId,
  type EventSink,
  type RecordedEvent,
  type RelayOptions,
  type Settlement
} from "@accord/domain"
import { makeMemoryStore } from "@accord/store-memory"

// docs/operations.md, "Events": the domain's relay with sinks of the test's own, on the memory store. Every wait is for
// a count of what the sinks and the observer saw, never for a time; the one duration asserted is a lower bound (a
// sink's Retry-After), which a slow machine only makes longer.

const USER = UserId.make("u_relay")

const runtimes: Array<ManagedRuntime.ManagedRuntime<EventStore | PreferencesStore, never>> = []
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.dispose()
})

/** A memory store, and `changes` timezone changes of the user recorded at `at` (each an event). */
const storeWith = async (changes: number, at = new Date()) => {
  const runtime = ManagedRuntime.make(makeMemoryStore())
  runtimes.push(runtime)
  const record = (count: number, from: number) =>
    runtime.runPromise(
      Effect.flatMap(PreferencesStore, (store) =>
        Effect.forEach(
          Array.from({ length: count }, (_, index) => from + index),
          (index) => store.update(USER, { set: { timezone: TimezoneOffset.make(15 * (index + 1)) }, at }),
          { discard: true }
        )
      )
    )
  await record(changes, 0)
  let recorded = changes
  return {
    runtime,
    /** Records `count` more events. */
    more: async (count: number) => {
      await record(count, recorded)
      recorded += count
    },
    events: () => runtime.runPromise(Effect.flatMap(EventStore, (events) => events.list(undefined, 1000)))
  }
}

/** Resolves once `condition` holds, looked at again after each change `changed()` reports. */
const watcher = () => {
  const waiting = new Set<() => void>()
  return {
    changed: () => {
      for (const check of [...waiting]) check()
    },
    until: (condition: () => boolean) =>
      new Promise<void>((resolve) => {
        const check = () => {
          if (!condition()) return
          waiting.delete(check)
          resolve()
        }
        waiting.add(check)
        check()
      })
  }
}

/** A sink that takes every event and records it. */
const takingSink = (name: string, seen: { changed: () => void }) => {
  const taken: Array<string> = []
  const sink: EventSink = {
    name,
    deliver: (event: RecordedEvent) =>
      Effect.sync(() => {
        taken.push(event.id)
        seen.changed()
      })
  }
  return { sink, taken }
}

const runRelay = (
  runtime: ManagedRuntime.ManagedRuntime<EventStore | PreferencesStore, never>,
  options: RelayOptions,
  store?: EventStore["Service"]
) => {
  const relay =
    store === undefined ? relayEvents(options) : Effect.provideService(relayEvents(options), EventStore, store)
  const fiber = runtime.runFork(relay)
  return () => runtime.runPromise(Fiber.interrupt(fiber))
}

const fast = { pollMillis: 2, backoff: () => Effect.succeed(1), restartBackoff: () => 1 } as const

describe("relayEvents: each sink has its own progress", () => {
  it("a sink that never answers does not delay another: the healthy one gets every event", async () => {
    const { runtime, events, more } = await storeWith(20)
    const seen = watcher()
    let hanging = 0
    const stuck: EventSink = {
      name: "stuck",
      deliver: () =>
        Effect.andThen(
          Effect.sync(() => {
            hanging++
            seen.changed()
          }),
          Effect.never
        )
    }
    const healthy = takingSink("healthy", seen)
    // The stuck sink first: a relay that tried sinks in turn would never reach the healthy one.
    const stop = runRelay(runtime, { sinks: [stuck, healthy.sink], ...fast })
    await seen.until(() => healthy.taken.length === 20)
    await more(20)
    await seen.until(() => healthy.taken.length === 40)
    await stop()
    expect(new Set(healthy.taken)).toEqual(new Set((await events()).map((event) => event.id)))
    expect(healthy.taken).toHaveLength(40)
    // The stuck sink holds its first claim (the default batch): its other events wait for it, and only for it.
    expect(hanging).toBeGreaterThan(0)
    const backlog = await runtime.runPromise(Effect.flatMap(EventStore, (store) => store.countBySink))
    expect(backlog).toEqual([{ sink: "stuck", pending: 40, failed: 0 }])
  })

  it("a sink's Retry-After holds that sink back at least as long, the other not at all", async () => {
    const { runtime } = await storeWith(3)
    const seen = watcher()
    const calls: Array<{ at: number; id: string }> = []
    let refusedUntil = 0
    const limited: EventSink = {
      name: "limited",
      deliver: (event) =>
        Effect.suspend(() => {
          const at = Date.now()
          calls.push({ at, id: event.id })
          seen.changed()
          if (calls.length > 1) return Effect.void
          refusedUntil = at + 300
          return Effect.fail(new DeliveryFailed({ reason: "status 429", retryAfterMillis: 300 }))
        })
    }
    const healthy = takingSink("healthy", seen)
    const stop = runRelay(runtime, { sinks: [limited, healthy.sink], ...fast, concurrency: 1, batchSize: 1 })
    await seen.until(() => healthy.taken.length === 3 && calls.length === 4)
    await stop()
    // Every attempt after the refusal, of any of the sink's events, came no sooner than it said.
    expect(calls.slice(1).every((call) => call.at >= refusedUntil)).toBe(true)
    expect(calls.filter((call) => call.id === calls[0]?.id)).toHaveLength(2)
  })

  it("a Retry-After longer than the bound is cut to it", async () => {
    const { runtime } = await storeWith(1)
    const seen = watcher()
    let calls = 0
    const limited: EventSink = {
      name: "limited",
      deliver: () =>
        Effect.suspend(() => {
          calls++
          seen.changed()
          return calls > 1
            ? Effect.void
            : Effect.fail(new DeliveryFailed({ reason: "status 503", retryAfterMillis: 86_400_000 }))
        })
    }
    const stop = runRelay(runtime, { sinks: [limited], ...fast, maxRetryAfterMillis: 20 })
    await seen.until(() => calls === 2)
    await stop()
    expect(calls).toBe(2)
  })

  it("a sink that is gone is not attempted again; its deliveries are kept; the other sink goes on", async () => {
    const { runtime, more } = await storeWith(1)
    const seen = watcher()
    const gone: Array<string> = []
    let calls = 0
    const leaving: EventSink = {
      name: "leaving",
      deliver: () =>
        Effect.suspend(() => {
          calls++
          return Effect.fail(new DeliveryFailed({ reason: "status 410", gone: true }))
        })
    }
    const healthy = takingSink("healthy", seen)
    const stop = runRelay(runtime, {
      sinks: [leaving, healthy.sink],
      ...fast,
      observer: {
        gone: (sink, reason) =>
          Effect.sync(() => {
            gone.push(`${sink}: ${reason}`)
            seen.changed()
          })
      }
    })
    await seen.until(() => gone.length === 1 && healthy.taken.length === 1)
    await more(5)
    await seen.until(() => healthy.taken.length === 6)
    await stop()
    expect(gone).toEqual(["leaving: status 410"])
    expect(calls).toBe(1)
    const backlog = await runtime.runPromise(Effect.flatMap(EventStore, (store) => store.countBySink))
    expect(backlog).toEqual([{ sink: "leaving", pending: 6, failed: 0 }])
  })
})

describe("relayEvents: a loop that dies", () => {
  it("a store defect ends a sink's loop: told to the observer, restarted, and every event delivered", async () => {
    const { runtime, events } = await storeWith(10)
    const seen = watcher()
    const store = await runtime.runPromise(Effect.service(EventStore))
    // As PGlite's refusal of an array parameter did (issue 35): the first settlement is a defect.
    let settlements = 0
    const flaky: EventStore["Service"] = {
      ...store,
      settle: (eventId, sink, settlement) =>
        ++settlements === 1
          ? Effect.die(new TypeError("a statement parameter of an unsupported type (object)"))
          : store.settle(eventId, sink, settlement)
    }
    const died: Array<string> = []
    const started: Array<number> = []
    const healthy = takingSink("healthy", seen)
    const stop = runRelay(
      runtime,
      {
        sinks: [healthy.sink],
        ...fast,
        leaseMillis: 50,
        observer: {
          died: (sink, cause, restartInMillis) =>
            Effect.sync(() => {
              died.push(`${sink} in ${restartInMillis}: ${String(Cause.squash(cause))}`)
              seen.changed()
            }),
          started: (_sink, restarts) => Effect.sync(() => void started.push(restarts))
        }
      },
      flaky
    )
    await seen.until(() => died.length === 1)
    const counts = () => runtime.runPromise(Effect.flatMap(EventStore, (each) => each.countByStatus))
    for (;;) {
      const now = await counts()
      if (now.delivered === 10) break
      await new Promise((resolve) => setTimeout(resolve, 5))
    }
    await stop()
    expect(died).toEqual(["healthy in 1: TypeError: a statement parameter of an unsupported type (object)"])
    expect(started).toEqual([0, 1])
    expect(new Set(healthy.taken)).toEqual(new Set((await events()).map((event) => event.id)))
  })

  it("without an observer, a loop's death is logged with Effect's logger", async () => {
    const { runtime } = await storeWith(1)
    const logged: Array<string> = []
    const seen = watcher()
    let calls = 0
    const dying: EventSink = {
      name: "dying",
      deliver: () => Effect.suspend(() => (++calls === 1 ? Effect.die(new Error("a bug in the sink")) : Effect.void))
    }
    // The test's own logger in place of the default one: what Effect.logError writes.
    const logger = Effect.provide(
      relayEvents({ sinks: [dying], ...fast, leaseMillis: 20 }),
      Logger.layer([
        Logger.make(({ message }) => {
          logged.push(Array.isArray(message) ? message.map(String).join(" ") : String(message))
          seen.changed()
        })
      ])
    )
    const fiber = runtime.runFork(logger)
    await seen.until(() => logged.length > 0)
    await runtime.runPromise(Fiber.interrupt(fiber))
    expect(logged[0]).toContain("the loop of sink dying died; restarting in 1 ms")
  })
})

describe("relayEvents: give-up and replay", () => {
  it("a replayed delivery gets the usual schedule: its first failure after the replay is retried, not given up", async () => {
    // Recorded 10 days ago: past the 3 days, its first attempt gives it up.
    const { runtime } = await storeWith(1, new Date(Date.now() - 10 * 86_400_000))
    const seen = watcher()
    const outcomes: Array<Pick<Settlement, "status" | "attempts">> = []
    const refusing: EventSink = {
      name: "refusing",
      deliver: () => Effect.fail(new DeliveryFailed({ reason: "status 500" }))
    }
    const stop = runRelay(runtime, {
      sinks: [refusing],
      ...fast,
      backoff: () => Effect.succeed(60_000),
      observer: {
        settled: (_delivery, settlement) =>
          Effect.sync(() => {
            outcomes.push({ status: settlement.status, attempts: settlement.attempts })
            seen.changed()
          })
      }
    })
    await seen.until(() => outcomes.length === 1)
    expect(outcomes).toEqual([{ status: "failed", attempts: 1 }])
    const replayed = await runtime.runPromise(Effect.flatMap(EventStore, (store) => store.replayFailed(new Date())))
    expect(replayed).toBe(1)
    await seen.until(() => outcomes.length === 2)
    await stop()
    expect(outcomes[1]).toEqual({ status: "pending", attempts: 1 })
  })
})

describe("pruneDeliveredEvents", () => {
  it("a round that ends on a defect is told, and the next round runs", async () => {
    const { runtime } = await storeWith(0)
    const seen = watcher()
    const store = await runtime.runPromise(Effect.service(EventStore))
    let rounds = 0
    const flaky: EventStore["Service"] = {
      ...store,
      pruneDelivered: () => (++rounds === 1 ? Effect.die(new Error("a bug in the statement")) : Effect.succeed(3))
    }
    const defects: Array<string> = []
    const pruned: Array<number> = []
    const fiber = runtime.runFork(
      Effect.provideService(
        pruneDeliveredEvents({
          retentionMillis: 86_400_000,
          intervalMillis: 1,
          onDefect: (cause) => Effect.sync(() => void defects.push(String(Cause.squash(cause)))),
          onPruned: (count) =>
            Effect.sync(() => {
              pruned.push(count)
              seen.changed()
            })
        }),
        EventStore,
        flaky
      )
    )
    await seen.until(() => pruned.length >= 1)
    await runtime.runPromise(Fiber.interrupt(fiber))
    expect(defects).toEqual(["Error: a bug in the statement"])
    expect(pruned[0]).toBe(3)
  })
})
