import { describe, expect, it } from "@effect/vitest"
import Fastify from "fastify"
import { listPaymentMethods } from "@accord/domain"
import type { AccordRuntime } from "@accord/core"
import { accordPlugin } from "@accord/adapter-fastify"
import { makeAccordTestKit } from "@accord/testkit"

// The host's app factory takes Accord's runtime as a parameter, so a test can hand it the kit's.
const buildHostApp = async (runtime: AccordRuntime) => {
  const app = Fastify()
  app.get("/checkout", async () => ({ step: "payment" }))
  await app.register(accordPlugin, { prefix: "/api", runtime })
  return app
}

describe("the host's checkout, with Accord from the test kit", () => {
  it("switches the default payment method through Accord's route", async () => {
    // A fresh in-memory store with a user, their token and two payment methods; nothing shared between tests.
    const kit = await makeAccordTestKit({ paymentMethods: [{ id: "pm_card", isDefault: true }, { id: "pm_bank" }] })
    const app = await buildHostApp(kit.runtime)
    try {
      expect((await app.inject({ method: "GET", url: "/checkout" })).json()).toEqual({ step: "payment" })
      const response = await app.inject({
        method: "PUT",
        url: "/api/payments/v1/payment-methods/pm_bank/",
        headers: { authorization: `Bearer ${kit.user.token}` }
      })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({ id: "pm_bank", is_default: true })

      // The same runtime runs use cases directly: check the store behind the route.
      const methods = await kit.runtime.runPromise(listPaymentMethods(kit.user.id))
      expect(methods.map((method) => [method.id, method.isDefault])).toEqual([
        ["pm_bank", true],
        ["pm_card", false]
      ])

      // An application credential may not act for a user.
      const asClient = await app.inject({
        method: "GET",
        url: "/api/payments/v1/payment-methods/",
        headers: { authorization: `Bearer ${kit.client.token}` }
      })
      expect(asClient.statusCode).toBe(403)
    } finally {
      await app.close()
      await kit.dispose()
    }
  })
})
