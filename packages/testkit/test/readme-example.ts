import { Authenticator, updateLanguagePreferences, type UserId } from "@accord/domain"
import { decodePreferencesPatch } from "@accord/contract"
import { makeAccordTestKit } from "@accord/testkit"
import { Effect } from "effect"

// Host code under test: adopt the browser's first language when a user signs in.
const adoptBrowserLanguage = (userId: UserId, acceptLanguage: string) =>
  Effect.flatMap(decodePreferencesPatch({ language: acceptLanguage.split(",")[0]?.split(";")[0] }), (patch) =>
    updateLanguagePreferences(userId, patch)
  )

const kit = await makeAccordTestKit()
try {
  const signedIn = await kit.runtime.runPromise(
    Effect.flatMap(Authenticator, (authenticator) => authenticator.authenticate(kit.user.token))
  )
  if (signedIn._tag !== "User") throw new Error("expected a user")
  const preferences = await kit.runtime.runPromise(adoptBrowserLanguage(signedIn.userId, "pt-br,en;q=0.8"))
  console.log(signedIn.userId, preferences.language)
  console.log(kit.paymentMethods.map((method) => method.id))
  // The events the change recorded, as a webhook or the feed carries them.
  console.log((await kit.events()).map((event) => `${event.type} ${event.subject}`))
} finally {
  await kit.dispose()
}
// u_1 pt-BR
// [ 'pm_1', 'pm_2' ]
// [ 'preferences.updated users/u_1' ]
