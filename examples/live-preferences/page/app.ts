// The page: a user's preferences, kept current as they change anywhere (another tab, another device, a script), by
// following the user's events (@accord/client/events-stream). Bundled for the browser by the server at its start.
import { makeAccordClient } from "@accord/client"
import { EventStreamError, followEvents, type FollowState } from "@accord/client/events-stream"

// Demo only: the token comes in the address's fragment, which the browser never sends to a server. A real page has
// its session's token (README of @accord/client, "Example: in a browser").
const token = new URLSearchParams(location.hash.slice(1)).get("token") ?? undefined
const baseUrl = new URL("/api", location.href).href
const accord = makeAccordClient({ baseUrl, ...(token !== undefined && { token }) })

const FIELDS = ["language", "timezone", "mfa_enabled"] as const
type Field = (typeof FIELDS)[number]

const show = (field: Field, value: string | number | boolean) => {
  const cell = document.getElementById(field)
  if (cell !== null) cell.textContent = String(value)
}

const setStatus = (text: string) => {
  const status = document.getElementById("status")
  if (status !== null) status.textContent = text
}

const describe = (state: FollowState): string => {
  switch (state.state) {
    case "connecting":
      return "connecting"
    case "open":
      return "live"
    case "waiting":
      return `reconnecting in ${Math.ceil(state.delay / 1000)} s`
  }
}

/** The id of the feed's last event, read before the values: a change made after it is followed, none is lost. */
const lastEventIdOfFeed = async (): Promise<string | undefined> => {
  let after: string | undefined
  for (;;) {
    const page = await accord.listEvents({ query: { limit: "100", ...(after !== undefined && { after }) } })
    if (!page.ok) throw new Error(`${page.problem.code}: ${page.problem.detail}`)
    after = page.value.data.at(-1)?.id ?? after
    if (!page.value.has_more) return after
  }
}

const main = async () => {
  // First where the feed ends, then the values: a change between the two is in both, and applying its new values
  // again changes nothing.
  const lastEventId = await lastEventIdOfFeed()
  const preferences = await accord.getLanguagePreferences()
  if (!preferences.ok) throw new Error(`${preferences.problem.code}: ${preferences.problem.detail}`)
  for (const field of FIELDS) show(field, preferences.value[field])

  const events = followEvents({
    baseUrl,
    ...(token !== undefined && { token }),
    ...(lastEventId !== undefined && { lastEventId }),
    onState: (state) => setStatus(describe(state))
  })
  for await (const event of events) {
    if (event.type !== "preferences.updated") continue
    const { changes } = event.data
    for (const field of FIELDS) {
      const change = changes[field]
      if (change !== undefined) show(field, change.new)
    }
    document.body.dataset["sequence"] = String(event.sequence)
  }
}

main().catch((error: unknown) => {
  setStatus(error instanceof EventStreamError ? `stopped: ${error.code ?? error.reason}` : `failed: ${String(error)}`)
})
