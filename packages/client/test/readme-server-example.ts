import { startFastifyServer } from "@accord/adapter-fastify"
import { makeAccordClient } from "@accord/client"
import { makeAccordTestKit } from "@accord/testkit"

// A server to talk to: Accord on Fastify over a seeded in-memory store. Yours is `npm start` or your deployment.
const kit = await makeAccordTestKit()
const server = await startFastifyServer({ runtime: kit.runtime, port: 0 })

const accord = makeAccordClient({
  baseUrl: `${server.url}/api`, // the API's base, prefix included
  token: () => kit.user.token // asked before each credentialed request: return a fresh token here
})

try {
  const updated = await accord.updateLanguagePreferences({ body: { language: "EN-us", timezone: 60 } })
  if (updated.ok) console.log(updated.status, updated.value.language, updated.value.timezone)

  const missing = await accord.setDefaultPaymentMethod({ params: { id: "pm_404" } })
  if (!missing.ok) console.log(missing.status, missing.problem.code)

  const invalid = await accord.updateLanguagePreferences({ body: { timezone: 7 } })
  if (!invalid.ok) console.log(invalid.problem.code, invalid.problem.errors)
} finally {
  await server.close()
  await kit.dispose()
}
// 200 en-US 60
// 404 not_found
// validation_failed [ { pointer: '/timezone', code: 'invalid_format', detail: 'must be a multiple of 15' } ]
