// @hey-api/openapi-ts: an SDK function per operation (generated/hey-api/sdk.gen.ts) over the fetch client it
// generates beside it (generated/hey-api/client). The document's bearer scheme makes each credentialed function send
// `Authorization: Bearer <auth>` from the client it is given.
import { createClient } from "../generated/hey-api/client/index.js"
import * as sdk from "../generated/hey-api/sdk.gen.js"
import { type Answer, type GeneratedClientCalls, SIGN_UP, type Target } from "./target.js"

/** The SDK's result: `data` on a success, `error` (the problem, typed) otherwise; no `response` if fetch threw. */
const answer = (result: {
  readonly data?: unknown
  readonly error?: unknown
  readonly response?: Response
}): Answer => ({
  status: result.response?.status ?? 0,
  body: result.data ?? result.error
})

export const heyApiCalls = (target: Target): GeneratedClientCalls => {
  const anonymous = createClient({ baseUrl: target.baseUrl })
  const user = createClient({ baseUrl: target.baseUrl, auth: target.userToken })
  const application = createClient({ baseUrl: target.baseUrl, auth: target.clientToken })
  // Keyed by the SDK's functions: an operation the document gains is a compile error here until it has a call.
  const calls: Record<keyof typeof sdk, () => Promise<Answer>> = {
    createPublicPlanEntry: async () => answer(await sdk.createPublicPlanEntry({ client: application, body: SIGN_UP })),
    getLanguagePreferences: async () => answer(await sdk.getLanguagePreferences({ client: user })),
    updateLanguagePreferences: async () => {
      const read = await sdk.getLanguagePreferences({ client: user })
      return answer(
        await sdk.updateLanguagePreferences({
          client: user,
          headers: { "If-Match": read.response?.headers.get("ETag") ?? "" },
          body: { language: "pt-BR", timezone: -180 }
        })
      )
    },
    listEvents: async () => answer(await sdk.listEvents({ client: user })),
    listPaymentMethods: async () => answer(await sdk.listPaymentMethods({ client: user })),
    setDefaultPaymentMethod: async () =>
      answer(
        await sdk.setDefaultPaymentMethod({
          client: user,
          path: { id: target.paymentMethodId },
          body: { is_default: true }
        })
      ),
    // The spec's deprecated alias of the same operation (docs/api.md, "Versioning"): the same answer.
    setDefaultPaymentMethodV1Alias: async () =>
      answer(
        await sdk.setDefaultPaymentMethodV1Alias({
          client: user,
          path: { id: target.paymentMethodId },
          body: { is_default: true }
        })
      ),
    health: async () => answer(await sdk.health({ client: anonymous })),
    liveness: async () => answer(await sdk.liveness({ client: anonymous })),
    readiness: async () => answer(await sdk.readiness({ client: anonymous }))
  }
  return {
    operations: calls,
    notFound: async () => {
      const { error, response } = await sdk.setDefaultPaymentMethod({
        client: user,
        path: { id: "pm_nobody_has" },
        body: { is_default: true }
      })
      return { status: response?.status ?? 0, code: error?.code, fields: [] }
    },
    invalidBody: async () => {
      const { error, response } = await sdk.createPublicPlanEntry({
        client: application,
        body: { email: SIGN_UP.email, password: "short" }
      })
      return {
        status: response?.status ?? 0,
        code: error?.code,
        fields: (error?.errors ?? []).map((issue) => `${issue.pointer} ${issue.code}`)
      }
    }
  }
}
