import { makeAccordClient } from "@accord/client"

// A page served by the API's host: the API under /api, the signed-in user's token kept in the session.
const accord = makeAccordClient({
  baseUrl: "/api",
  token: () => sessionStorage.getItem("accord-token") ?? undefined
})

const preferences = await accord.getLanguagePreferences()
if (preferences.ok) console.log(preferences.value.language, preferences.value.timezone)

const chosen = await accord.setDefaultPaymentMethod({ params: { id: "pm_2" } })
console.log(chosen.ok ? `${chosen.value.id} is the default` : chosen.problem.code)
// en 0
// pm_2 is the default
