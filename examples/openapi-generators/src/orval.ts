// orval (client `fetch`): a function per operation (generated/orval/accord.ts) that calls the mutator of
// src/orval-fetch.ts and returns `{ data, status, headers }`, typed by status: the problem on an error status.
import * as api from "../generated/orval/accord.js"
import { orvalServer } from "./orval-fetch.js"
import { type Answer, bearer, type GeneratedClientCalls, SIGN_UP, type Target } from "./target.js"

/** The generated module's operation functions (it also exports URL builders and enum objects). */
type OperationName = {
  [K in keyof typeof api]: (typeof api)[K] extends (...args: never) => Promise<unknown> ? K : never
}[keyof typeof api]

const answer = (result: { readonly data: unknown; readonly status: number }): Answer => ({
  status: result.status,
  body: result.data
})

export const orvalCalls = (target: Target): GeneratedClientCalls => {
  orvalServer.baseUrl = target.baseUrl
  const user = { headers: bearer(target.userToken) }
  const application = { headers: bearer(target.clientToken) }
  // Keyed by the generated functions: an operation the document gains is a compile error here until it has a call.
  const calls: Record<OperationName, () => Promise<Answer>> = {
    createPublicPlanEntry: async () => answer(await api.createPublicPlanEntry(SIGN_UP, application)),
    getLanguagePreferences: async () => answer(await api.getLanguagePreferences(user)),
    updateLanguagePreferences: async () => {
      const read = await api.getLanguagePreferences(user)
      const etag = read.headers.get("ETag") ?? ""
      return answer(
        await api.updateLanguagePreferences(
          { language: "pt-BR", timezone: -180 },
          { headers: { ...user.headers, "If-Match": etag } }
        )
      )
    },
    listEvents: async () => answer(await api.listEvents(undefined, user)),
    listPaymentMethods: async () => answer(await api.listPaymentMethods(user)),
    setDefaultPaymentMethod: async () =>
      answer(await api.setDefaultPaymentMethod(target.paymentMethodId, { is_default: true }, user)),
    // The spec's deprecated alias of the same operation (docs/api.md, "Versioning"): the same answer.
    setDefaultPaymentMethodV1Alias: async () =>
      answer(await api.setDefaultPaymentMethodV1Alias(target.paymentMethodId, { is_default: true }, user)),
    health: async () => answer(await api.health()),
    liveness: async () => answer(await api.liveness()),
    readiness: async () => answer(await api.readiness())
  }
  return {
    operations: calls,
    notFound: async () => {
      const result = await api.setDefaultPaymentMethod("pm_nobody_has", { is_default: true }, user)
      // orval narrows `data` by `status`: only a 404 answer's data is the Problem here.
      return { status: result.status, code: result.status === 404 ? result.data.code : undefined, fields: [] }
    },
    invalidBody: async () => {
      const result = await api.createPublicPlanEntry({ email: SIGN_UP.email, password: "short" }, application)
      if (result.status !== 400) return { status: result.status, code: undefined, fields: [] }
      return {
        status: result.status,
        code: result.data.code,
        fields: (result.data.errors ?? []).map((issue) => `${issue.pointer} ${issue.code}`)
      }
    }
  }
}
