import { startFastifyServer } from "@accord/adapter-fastify"
import type { AccordEvent } from "@accord/client/events-stream"
import { decodePreferencesPatch } from "@accord/contract"
import { PaymentMethodId, setDefaultPaymentMethod, updateLanguagePreferences } from "@accord/domain"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { makeAccordTestKit, type AccordTestKit } from "@accord/testkit"
import { eventStreamSkipReason } from "../../../test-support/event-stream.js"

// kit.followEvents(): the client's follower (@accord/client/events-stream), by default over the kit's runtime in
// process. Its wiring is checked against a stub; what needs the server's stream (issue 39) skips, saying why, where
// the server does not stream.

const kits: Array<AccordTestKit> = []
const kit = async () => {
  const made = await makeAccordTestKit()
  kits.push(made)
  return made
}

afterEach(async () => {
  await Promise.all(kits.splice(0).map((made) => made.dispose()))
})

const setTimezone = (made: AccordTestKit, timezone: number) =>
  made.runtime.runPromise(
    Effect.flatMap(decodePreferencesPatch({ timezone }), (patch) => updateLanguagePreferences(made.user.id, patch))
  )

/** The first `count` events of a follower, then leaves the loop (closing the connection). */
const take = async (follower: AsyncIterable<AccordEvent>, count: number, then?: (event: AccordEvent) => unknown) => {
  const events: Array<AccordEvent> = []
  for await (const event of follower) {
    events.push(event)
    await then?.(event)
    if (events.length === count) break
  }
  return events
}

describe("kit.followEvents: its defaults", () => {
  it("asks the in-process URL with the user's token; an option replaces a default", async () => {
    const made = await kit()
    await setTimezone(made, 60)
    const [recorded] = await made.events()
    const seen: Array<readonly [string, string | null, string | null]> = []
    /** A stream of the kit's one event, as the server writes it. */
    const stub = async (request: Request) => {
      seen.push([request.url, request.headers.get("authorization"), request.headers.get("last-event-id")])
      return new Response(`retry: 2000\n\nid: ${recorded?.id}\ndata: ${JSON.stringify(recorded)}\n\n`, {
        headers: { "content-type": "text/event-stream" }
      })
    }
    expect(await take(made.followEvents({ fetch: stub }), 1)).toEqual([recorded])
    expect(await take(made.followEvents({ fetch: stub, token: "other", lastEventId: "e_0" }), 1)).toEqual([recorded])
    expect(await take(made.followEvents({ fetch: stub, baseUrl: "http://127.0.0.1:9/x" }), 1)).toEqual([recorded])
    expect(seen).toEqual([
      ["http://accord.test/api/users/v1/events/", `Bearer ${made.user.token}`, null],
      ["http://accord.test/api/users/v1/events/", "Bearer other", "e_0"],
      ["http://127.0.0.1:9/x/users/v1/events/", `Bearer ${made.user.token}`, null]
    ])
  })
})

const skipReason = await eventStreamSkipReason()

describe.skipIf(skipReason !== undefined)(
  skipReason === undefined
    ? "kit.followEvents against the stream"
    : `kit.followEvents against the stream (${skipReason})`,
  () => {
    it("in process: replays what was recorded, then the live changes, as kit.events() has them", async () => {
      const made = await kit()
      await setTimezone(made, 60)
      const events = await take(made.followEvents(), 3, async (event) => {
        // Each change made once the previous event arrived: live, not replayed.
        if (event.sequence === 1) await setTimezone(made, 120)
        if (event.sequence === 2)
          await made.runtime.runPromise(setDefaultPaymentMethod(made.user.id, PaymentMethodId.make("pm_2")))
      })
      expect(events).toEqual(await made.events())
      expect(events.map((event) => event.type)).toEqual([
        "preferences.updated",
        "preferences.updated",
        "payment_method.default_changed"
      ])
    })

    it("resumes after the lastEventId it is given, and refuses an application's credential", async () => {
      const made = await kit()
      await setTimezone(made, 60)
      await setTimezone(made, 120)
      const [first, second] = await made.events()
      expect(await take(made.followEvents({ lastEventId: first?.id ?? "" }), 1)).toEqual([second])
      await expect(take(made.followEvents({ token: made.client.token }), 1)).rejects.toMatchObject({
        reason: "refused",
        status: 403,
        code: "insufficient_scope"
      })
    })

    it("over a port: a server of the host's serving the kit's runtime", async () => {
      const made = await kit()
      const server = await startFastifyServer({ runtime: made.runtime, host: "127.0.0.1", port: 0 })
      try {
        let changed = false
        const follower = made.followEvents({
          baseUrl: `${server.url}/api`,
          // Nothing recorded when the follower starts: the change is made once the stream is open.
          onState: ({ state }) => {
            if (state === "open" && !changed) {
              changed = true
              void setTimezone(made, 60)
            }
          }
        })
        const events = await take(follower, 1)
        expect(events).toEqual(await made.events())
      } finally {
        await server.close()
      }
    })
  }
)
