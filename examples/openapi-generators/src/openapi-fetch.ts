// openapi-typescript + openapi-fetch: `paths` and `operations` are types generated from the document
// (generated/openapi-typescript/schema.d.ts); openapi-fetch is the run-time half, typed by them.
import createClient from "openapi-fetch"
import type { operations, paths } from "../generated/openapi-typescript/schema.js"
import { type Answer, bearer, type GeneratedClientCalls, SIGN_UP, type Target } from "./target.js"

/** openapi-fetch's result: `data` on a success, `error` (the problem, typed) otherwise. */
const answer = (result: {
  readonly data?: unknown
  readonly error?: unknown
  readonly response: Response
}): Answer => ({
  status: result.response.status,
  body: result.data ?? result.error
})

export const openapiFetchCalls = (target: Target): GeneratedClientCalls => {
  const client = createClient<paths>({ baseUrl: target.baseUrl })
  const user = bearer(target.userToken)
  // Keyed by the generated `operations`: an operation the document gains is a compile error here until it has a call.
  // The webhooks' operations (`event.<type>`) are the server's to send, not a client's to call.
  const calls: Record<Exclude<keyof operations, `event.${string}`>, () => Promise<Answer>> = {
    createPublicPlanEntry: async () =>
      answer(
        await client.POST("/plans/v1/subscription-plans/public/", {
          body: SIGN_UP,
          headers: bearer(target.clientToken)
        })
      ),
    getLanguagePreferences: async () => answer(await client.GET("/users/v1/preferences/language/", { headers: user })),
    updateLanguagePreferences: async () => {
      // A conditional write: the ETag just read goes back in If-Match, a header parameter of the document.
      const read = await client.GET("/users/v1/preferences/language/", { headers: user })
      const etag = read.response.headers.get("ETag") ?? ""
      return answer(
        await client.PUT("/users/v1/preferences/language/", {
          params: { header: { "If-Match": etag } },
          body: { language: "pt-BR", timezone: -180 },
          headers: user
        })
      )
    },
    listEvents: async () => answer(await client.GET("/users/v1/events/", { headers: user })),
    listPaymentMethods: async () => answer(await client.GET("/payments/v1/payment-methods/", { headers: user })),
    setDefaultPaymentMethod: async () =>
      answer(
        await client.PUT("/payments/v1/payment-methods/{id}/", {
          params: { path: { id: target.paymentMethodId } },
          body: { is_default: true },
          headers: user
        })
      ),
    // The spec's deprecated alias of the same operation (docs/api.md, "Versioning"): the same answer.
    setDefaultPaymentMethodV1Alias: async () =>
      answer(
        await client.PUT("/v1/payment-methods/{id}/", {
          params: { path: { id: target.paymentMethodId } },
          body: { is_default: true },
          headers: user
        })
      ),
    health: async () => answer(await client.GET("/health")),
    liveness: async () => answer(await client.GET("/health/live")),
    readiness: async () => answer(await client.GET("/health/ready"))
  }
  return {
    operations: calls,
    notFound: async () => {
      const { error, response } = await client.PUT("/payments/v1/payment-methods/{id}/", {
        params: { path: { id: "pm_nobody_has" } },
        body: { is_default: true },
        headers: user
      })
      return { status: response.status, code: error?.code, fields: [] }
    },
    invalidBody: async () => {
      const { error, response } = await client.POST("/plans/v1/subscription-plans/public/", {
        body: { email: SIGN_UP.email, password: "short" },
        headers: bearer(target.clientToken)
      })
      return {
        status: response.status,
        code: error?.code,
        fields: (error?.errors ?? []).map((issue) => `${issue.pointer} ${issue.code}`)
      }
    }
  }
}
