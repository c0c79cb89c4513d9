import {
  makeAccordClient,
  type AccordClientMethods,
  type AccordTransportError,
  type ProblemBody,
  type ResultOf
} from "@accord/client"
import { AccordClient, type AccordProblem } from "@accord/client/effect"
import type { OperationOf } from "@accord/client"
import { makeAccordClient as makeValidatedClient } from "@accord/client/validated"
import {
  defineOperation,
  type OperationRoute,
  type OperationRoutes,
  type PaymentMethodView,
  type PreferencesView
} from "@accord/contract"
import { describe, expectTypeOf, it } from "@effect/vitest"
import { Effect, Schema } from "effect"

// Checked by `npx tsc -p tsconfig.test.json`: each `@ts-expect-error` line must fail to compile, and would fail that
// check if it compiled. The functions are never called: only their types matter.

type Always = "bad_request" | "request_timeout" | "uri_too_long" | "headers_too_large" | "internal"
type Credentialed = "unauthenticated" | "invalid_token" | "rate_limited"
type WithBody =
  | "not_implemented"
  | "unsupported_media_type"
  | "payload_too_large"
  | "invalid_json"
  | "invalid_body"
  | "validation_failed"

declare const client: AccordClientMethods

const requests = async () => {
  // @ts-expect-error: timezone is a number on the wire
  await client.updateLanguagePreferences({ body: { timezone: "60" } })
  // @ts-expect-error: mfa_enabled is a JSON boolean
  await client.updateLanguagePreferences({ body: { mfa_enabled: "true" } })
  // @ts-expect-error: an unknown field
  await client.updateLanguagePreferences({ body: { langauge: "en" } })
  // @ts-expect-error: the body is required here
  await client.updateLanguagePreferences()
  // @ts-expect-error: the password is required
  await client.createPublicPlanEntry({ body: { email: "a@example.com" } })
  // @ts-expect-error: the path parameter is missing
  await client.setDefaultPaymentMethod()
  // @ts-expect-error: the path parameter is missing
  await client.setDefaultPaymentMethod({})
  // @ts-expect-error: the path parameter is missing
  await client.setDefaultPaymentMethod({ body: { is_default: true } })
  // @ts-expect-error: the parameter is named id
  await client.setDefaultPaymentMethod({ params: { paymentMethodId: "pm_1" } })
  // @ts-expect-error: is_default is a boolean
  await client.setDefaultPaymentMethod({ params: { id: "pm_1" }, body: { is_default: "yes" } })
  // @ts-expect-error: is_default may only be true (docs/api.md: false is 400 not_allowed)
  await client.setDefaultPaymentMethod({ params: { id: "pm_1" }, body: { is_default: false } })
  // @ts-expect-error: health takes no body
  await client.health({ body: {} })
  // @ts-expect-error: listPaymentMethods takes no parameters
  await client.listPaymentMethods({ params: { id: "pm_1" } })
  // @ts-expect-error: no such operation
  await client.deletePaymentMethod()

  // What compiles: no argument where nothing is required, an optional body, a signal.
  await client.health()
  await client.listPaymentMethods({ signal: new AbortController().signal })
  await client.setDefaultPaymentMethod({ params: { id: "pm_1" } })
  await client.setDefaultPaymentMethod({ params: { id: "pm_1" }, body: {} })
  await client.updateLanguagePreferences({ body: {} })
}

const options = () => {
  // @ts-expect-error: a token is a string
  makeAccordClient({ baseUrl: "http://127.0.0.1:3000/api", token: 42 })
  // @ts-expect-error: a token function returns a string (or a promise of one)
  makeAccordClient({ baseUrl: "http://127.0.0.1:3000/api", token: () => 42 })
  // @ts-expect-error: a token function returns a string (or a promise of one)
  makeAccordClient({ baseUrl: "http://127.0.0.1:3000/api", token: async () => ({ token: "t" }) })
  // @ts-expect-error: baseUrl is required
  makeAccordClient({ token: "t" })
  // @ts-expect-error: fetch takes a Request
  makeAccordClient({ baseUrl: "/api", fetch: (url: number) => Promise.resolve(new Response(String(url))) })

  makeAccordClient({ baseUrl: "/api" })
  makeAccordClient({ baseUrl: "/api", token: "t" })
  makeAccordClient({ baseUrl: "/api", token: () => undefined })
  makeAccordClient({ baseUrl: "/api", token: async () => "t", fetch: (request) => fetch(request) })
}

const narrowing = async () => {
  const result = await client.setDefaultPaymentMethod({ params: { id: "pm_1" } })
  // @ts-expect-error: value exists only when ok
  void result.value
  // @ts-expect-error: problem exists only when not ok
  void result.problem
  if (result.ok) {
    expectTypeOf(result.value).toEqualTypeOf<PaymentMethodView>()
    expectTypeOf(result.status).toEqualTypeOf<200>()
    // @ts-expect-error: a success has no problem
    void result.problem
  } else {
    // @ts-expect-error: a problem has no value
    void result.value
    // @ts-expect-error: setDefaultPaymentMethod is never answered method_not_allowed
    if (result.problem.code === "method_not_allowed") return
    expectTypeOf(result.status).toEqualTypeOf<
      400 | 401 | 403 | 404 | 408 | 412 | 413 | 414 | 415 | 429 | 431 | 500 | 501 | 503
    >()
  }

  const health = await client.health()
  // @ts-expect-error: health reads no body and has no path parameter, so it is never answered 400 or 404
  if (!health.ok && (health.problem.code === "validation_failed" || health.problem.code === "not_found")) return
}

const effects = () =>
  Effect.gen(function* () {
    const accord = yield* AccordClient
    // @ts-expect-error: the path parameter is missing
    yield* accord.setDefaultPaymentMethod()
    // @ts-expect-error: timezone is a number on the wire
    yield* accord.updateLanguagePreferences({ body: { timezone: "60" } })
    const preferences = accord.getLanguagePreferences()
    expectTypeOf(preferences).toEqualTypeOf<
      Effect.Effect<
        PreferencesView,
        AccordProblem<Always | Credentialed | "insufficient_scope" | "unavailable"> | AccordTransportError,
        never
      >
    >()
  })

const entries = () => {
  // @accord/client/validated is the same client: the same function type, and the Effect flavour wraps either.
  expectTypeOf(makeValidatedClient).toEqualTypeOf(makeAccordClient)
  AccordClient.layerFrom(makeValidatedClient({ baseUrl: "/api" }))
  // @ts-expect-error: layerFrom takes a client, not its options
  AccordClient.layerFrom({ baseUrl: "/api" })
}

// The default client hands a success's JSON over as the success Schema's type: an operation whose success Schema
// transforms its JSON (here a Date from a string) has a route whose success status no generated file can state.
const transforming = defineOperation({
  operationId: "readClock",
  method: "GET",
  path: "/clock",
  access: "public",
  success: { status: 200, schema: Schema.Struct({ now: Schema.DateFromString }) },
  errors: [],
  records: "none"
})
// @ts-expect-error: the success Schema transforms its JSON
const transformingRoute: OperationRoute<typeof transforming>["success"] = transforming.success.status
const sameOnTheWire: OperationRoutes["health"]["success"] = 200

describe("the client's types", () => {
  it("are derived from the route table: problem codes per operation", () => {
    expectTypeOf<ResultOf<OperationOf<"health">>>().toEqualTypeOf<
      | {
          readonly ok: true
          readonly status: 200
          readonly value: { readonly status: "ok" }
          readonly etag: string | undefined
        }
      | {
          readonly ok: false
          readonly status: 400 | 408 | 414 | 431 | 500 | 503
          readonly problem: ProblemBody<Always | "unavailable">
        }
    >()
    type CreateCodes = Extract<ResultOf<OperationOf<"createPublicPlanEntry">>, { ok: false }>["problem"]["code"]
    expectTypeOf<CreateCodes>().toEqualTypeOf<Always | Credentialed | WithBody | "unavailable">()
    type SetDefaultCodes = Extract<ResultOf<OperationOf<"setDefaultPaymentMethod">>, { ok: false }>["problem"]["code"]
    expectTypeOf<SetDefaultCodes>().toEqualTypeOf<
      Always | Credentialed | "insufficient_scope" | WithBody | "not_found" | "precondition_failed" | "unavailable"
    >()
    // The set-default body confirms the operation only: the contract's Schema types is_default `true`.
    type SetDefaultInput = NonNullable<Parameters<AccordClientMethods["setDefaultPaymentMethod"]>[0]>
    expectTypeOf<NonNullable<SetDefaultInput["body"]>>().toEqualTypeOf<{ readonly is_default?: true }>()
    expectTypeOf(requests).toBeFunction()
    expectTypeOf(options).toBeFunction()
    expectTypeOf(narrowing).toBeFunction()
    expectTypeOf(effects).toBeFunction()
    expectTypeOf(entries).toBeFunction()
    expectTypeOf([transformingRoute, sameOnTheWire]).toBeArray()
  })
})
