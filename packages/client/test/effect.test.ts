import { startFastifyServer } from "@accord/adapter-fastify"
import { AccordClient, AccordProblem, AccordTransportError, type AccordClientOptions } from "@accord/client/effect"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { inProcess, makeFixture, overPort, type Fixture } from "./servers.js"

describe.each([
  ["the fetch handler in process", inProcess],
  ["fastify over a port", overPort(startFastifyServer)]
])("the Effect flavour against %s", (_, open) => {
  let fixture: Fixture
  let options: AccordClientOptions
  beforeAll(async () => {
    fixture = await makeFixture(open)
    const { baseUrl, fetch } = fixture.target
    options = { baseUrl, token: fixture.kit.user.token, ...(fetch !== undefined && { fetch }) }
  })
  afterAll(() => fixture.close())

  const provided = <A, E>(program: Effect.Effect<A, E, AccordClient>, overrides?: Partial<AccordClientOptions>) =>
    Effect.provide(program, AccordClient.layer({ ...options, ...overrides }))

  it.effect("succeeds with the decoded success value", () =>
    provided(
      Effect.gen(function* () {
        const accord = yield* AccordClient
        const updated = yield* accord.updateLanguagePreferences({ body: { language: "de-ch" } })
        expect(updated.language).toBe("de-CH")
        const listed = yield* accord.listPaymentMethods()
        expect(listed.data.map((method) => method.id)).toStrictEqual(["pm_1", "pm_2"])
        expect(yield* accord.health()).toStrictEqual({ status: "ok" })
      })
    )
  )

  it.effect("fails with an AccordProblem carrying the status and the typed problem", () =>
    provided(
      Effect.gen(function* () {
        const accord = yield* AccordClient
        const problem = yield* Effect.flip(accord.setDefaultPaymentMethod({ params: { id: "pm_404" } }))
        expect(problem).toBeInstanceOf(AccordProblem)
        if (problem._tag !== "AccordProblem") throw new Error("expected a problem")
        expect([problem.status, problem.problem.code]).toStrictEqual([404, "not_found"])
        expect(problem.message).toBe("404 not_found: No resource exists at this address.")
      })
    )
  )

  it.effect("lets a problem be handled by its tag, like any tagged error", () =>
    provided(
      Effect.gen(function* () {
        const accord = yield* AccordClient
        const code = yield* accord.getLanguagePreferences().pipe(
          Effect.as("none"),
          Effect.catchTag("AccordProblem", (refused) => Effect.succeed(refused.problem.code))
        )
        expect(code).toBe("invalid_token")
      }),
      { token: "unknown-token" }
    )
  )

  it.effect("fails with an AccordTransportError when no answer comes", () =>
    provided(
      Effect.gen(function* () {
        const accord = yield* AccordClient
        const error = yield* Effect.flip(accord.health())
        expect(error).toBeInstanceOf(AccordTransportError)
        expect(error._tag === "AccordTransportError" && error.reason).toBe("network")
      }),
      { fetch: () => Promise.reject(new TypeError("fetch failed")) }
    )
  )
})

describe("the Effect flavour and interruption", () => {
  it.effect("aborts the request when the effect is interrupted", () => {
    let aborted = false
    let started: () => void = () => undefined
    const sending = new Promise<void>((resolve) => (started = resolve))
    const layer = AccordClient.layer({
      baseUrl: "http://accord.test/api",
      fetch: (request) =>
        new Promise<Response>((_, reject) => {
          request.signal.addEventListener("abort", () => {
            aborted = true
            reject(request.signal.reason)
          })
          started()
        })
    })
    return Effect.gen(function* () {
      const accord = yield* AccordClient
      const fiber = yield* Effect.forkChild(accord.health())
      yield* Effect.promise(() => sending)
      yield* Fiber.interrupt(fiber)
      expect(aborted).toBe(true)
    }).pipe(Effect.provide(layer))
  })
})
