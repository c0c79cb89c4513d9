import { startFastifyServer } from "@accord/adapter-fastify"
import { makeAccordClient } from "@accord/client"
import { followEvents } from "@accord/client/events-stream"
import { makeAccordTestKit } from "@accord/testkit"

const kit = await makeAccordTestKit()
const server = await startFastifyServer({ runtime: kit.runtime, port: 0 })
const baseUrl = `${server.url}/api`
const accord = makeAccordClient({ baseUrl, token: () => kit.user.token })

try {
  // A change made before following: the stream replays it first (no lastEventId: from the first event).
  await accord.updateLanguagePreferences({ body: { timezone: 60 } })
  const stop = new AbortController()
  const events = followEvents({ baseUrl, token: () => kit.user.token, signal: stop.signal })
  for await (const event of events) {
    if (event.type === "preferences.updated") console.log(event.sequence, event.data.changes)
    // Another device's change, made while the stream is open: it arrives live.
    if (event.sequence === 1) await accord.updateLanguagePreferences({ body: { language: "pt-BR" } })
    else stop.abort() // ends the loop and closes the connection
  }
  console.log(events.lastEventId === (await kit.events()).at(-1)?.id) // keep it to resume later
} finally {
  await server.close()
  await kit.dispose()
}
// 1 { timezone: { old: 0, new: 60 } }
// 2 { language: { old: 'en', new: 'pt-BR' } }
// true
