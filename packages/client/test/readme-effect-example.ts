import { makeFetchHandler } from "@accord/adapter-fetch"
import { AccordClient } from "@accord/client/effect"
import { makeAccordTestKit } from "@accord/testkit"
import { Effect } from "effect"

const program = Effect.gen(function* () {
  const accord = yield* AccordClient
  const preferences = yield* accord.updateLanguagePreferences({ body: { mfa_enabled: true } })
  // A problem is a typed failure: its code is one the operation can be answered with.
  const code = yield* accord.setDefaultPaymentMethod({ params: { id: "pm_404" } }).pipe(
    Effect.as("ok"),
    Effect.catchTag("AccordProblem", (refused) => Effect.succeed(refused.problem.code))
  )
  return [preferences.mfa_enabled, code] as const
})

const kit = await makeAccordTestKit()
try {
  const AccordClientLive = AccordClient.layer({
    baseUrl: "http://accord.test/api",
    token: kit.user.token,
    fetch: makeFetchHandler({ runtime: kit.runtime, prefix: "/api" })
  })
  console.log(await Effect.runPromise(program.pipe(Effect.provide(AccordClientLive))))
} finally {
  await kit.dispose()
}
// [ true, 'not_found' ]
