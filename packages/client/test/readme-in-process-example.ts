import { makeFetchHandler } from "@accord/adapter-fetch"
import { makeAccordClient, type AccordClientMethods } from "@accord/client"
import { makeAccordTestKit } from "@accord/testkit"

// Host code under test: once a user has payment methods, one of them should be the default.
const ensureDefaultPaymentMethod = async (accord: AccordClientMethods): Promise<string | undefined> => {
  const listed = await accord.listPaymentMethods()
  if (!listed.ok) throw new Error(`${listed.problem.code}: ${listed.problem.detail}`)
  const methods = listed.value.data
  if (methods.some((method) => method.is_default)) return undefined
  const first = methods[0]
  if (first === undefined) return undefined
  const chosen = await accord.setDefaultPaymentMethod({ params: { id: first.id } })
  return chosen.ok ? chosen.value.id : undefined
}

const kit = await makeAccordTestKit()
try {
  const accord = makeAccordClient({
    baseUrl: "http://accord.test/api", // any absolute URL: the handler reads only its path
    token: kit.user.token,
    fetch: makeFetchHandler({ runtime: kit.runtime, prefix: "/api" }) // in process: no server, no socket
  })
  console.log(await ensureDefaultPaymentMethod(accord))
  console.log(await ensureDefaultPaymentMethod(accord))
} finally {
  await kit.dispose()
}
// pm_1
// undefined
