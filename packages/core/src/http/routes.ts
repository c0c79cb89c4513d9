import { Effect, Schema } from "effect"
import type { DomainError } from "../domain/errors.js"
import type { UserId } from "../domain/ids.js"
import { PaymentMethodList, PaymentMethodView, SetDefaultBody, toPaymentMethodView } from "../domain/payment-method.js"
import { MASKED_PASSWORD, PlanEntryBody, PlanEntryView } from "../domain/plan-entry.js"
import { PreferencesPatchBody, PreferencesView, toPreferencesView } from "../domain/preferences.js"
import type { Principal } from "../domain/principal.js"
import { StoreAdmin } from "../ports/store-admin.js"
import { createPublicPlanEntry } from "../use-cases/create-public-plan-entry.js"
import { getLanguagePreferences, updateLanguagePreferences } from "../use-cases/language-preferences.js"
import { listPaymentMethods, setDefaultPaymentMethod } from "../use-cases/payment-methods.js"
import type { AccordServices } from "./types.js"

export type HttpMethod = "GET" | "POST" | "PUT"

export interface OperationRequest {
  /** Decoded path parameters by name (`{id}` -> `params.id`). */
  readonly params: Readonly<Record<string, string>>
  /** Parsed JSON body, undefined when the request had none. */
  readonly body: unknown
}

type Program = Effect.Effect<unknown, DomainError, AccordServices>

/** Who may call an operation, and what its program receives accordingly. */
export type Access =
  | { readonly kind: "none"; readonly run: (request: OperationRequest) => Program }
  | { readonly kind: "any"; readonly run: (principal: Principal, request: OperationRequest) => Program }
  | { readonly kind: "user"; readonly run: (userId: UserId, request: OperationRequest) => Program }

/** One operation of the route table: data the handler and the OpenAPI generator both read. */
export interface Operation {
  readonly operationId: string
  readonly method: HttpMethod
  readonly summary: string
  readonly access: Access
  readonly successStatus: 200 | 201
  /** The JSON body the operation reads; `required: false` means no body at all is fine too. */
  readonly body?: { readonly schema: Schema.Top; readonly required: boolean }
  readonly response: Schema.Top
  /** Error statuses the operation can answer besides the ones every credentialed route has. */
  readonly errorStatuses: ReadonlyArray<number>
}

export interface Route {
  /** Path relative to the mount prefix, as written in SPEC.md and the OpenAPI document. */
  readonly path: string
  /** Exact routes do not also answer without their trailing slash (health, openapi.json, docs). */
  readonly exact: boolean
  readonly operations: ReadonlyArray<Operation>
}

const HealthView = Schema.Struct({ status: Schema.Literal("ok") }).annotate({ identifier: "Health" })

const planEntryView = (email: string): typeof PlanEntryView.Type => ({ email, password: MASKED_PASSWORD })

/** The route table of Accord's API: the single source of routing, access rules and the OpenAPI document. */
export const apiRoutes: ReadonlyArray<Route> = [
  {
    path: "/plans/v1/subscription-plans/public/",
    exact: false,
    operations: [
      {
        operationId: "createPublicPlanEntry",
        method: "POST",
        summary: "Create a public subscription plan entry",
        access: {
          kind: "any",
          run: (_principal, { body }) => Effect.map(createPublicPlanEntry(body), (entry) => planEntryView(entry.email))
        },
        successStatus: 201,
        body: { schema: PlanEntryBody, required: true },
        response: PlanEntryView,
        errorStatuses: [400, 413, 415, 503]
      }
    ]
  },
  {
    path: "/users/v1/preferences/language/",
    exact: false,
    operations: [
      {
        operationId: "getLanguagePreferences",
        method: "GET",
        summary: "Read the user's language preferences",
        access: { kind: "user", run: (userId) => Effect.map(getLanguagePreferences(userId), toPreferencesView) },
        successStatus: 200,
        response: PreferencesView,
        errorStatuses: [403, 503]
      },
      {
        operationId: "updateLanguagePreferences",
        method: "PUT",
        summary: "Update the user's language preferences (merge)",
        access: {
          kind: "user",
          run: (userId, { body }) => Effect.map(updateLanguagePreferences(userId, body), toPreferencesView)
        },
        successStatus: 200,
        body: { schema: PreferencesPatchBody, required: true },
        response: PreferencesView,
        errorStatuses: [400, 403, 413, 415, 503]
      }
    ]
  },
  {
    path: "/payments/v1/payment-methods/",
    exact: false,
    operations: [
      {
        operationId: "listPaymentMethods",
        method: "GET",
        summary: "List the user's payment methods, ordered by id",
        access: {
          kind: "user",
          run: (userId) =>
            Effect.map(listPaymentMethods(userId), (methods) => ({ data: methods.map(toPaymentMethodView) }))
        },
        successStatus: 200,
        response: PaymentMethodList,
        errorStatuses: [403, 503]
      }
    ]
  },
  {
    path: "/payments/v1/payment-methods/{id}/",
    exact: false,
    operations: [
      {
        operationId: "setDefaultPaymentMethod",
        method: "PUT",
        summary: "Set one of the user's payment methods as the default",
        access: {
          kind: "user",
          run: (userId, { params, body }) =>
            Effect.map(setDefaultPaymentMethod(userId, params["id"] ?? "", body), toPaymentMethodView)
        },
        successStatus: 200,
        body: { schema: SetDefaultBody, required: false },
        response: PaymentMethodView,
        errorStatuses: [400, 403, 404, 413, 415, 503]
      }
    ]
  },
  {
    path: "/health",
    exact: true,
    operations: [
      {
        operationId: "health",
        method: "GET",
        summary: "Liveness of the service and its store",
        access: {
          kind: "none",
          run: () => Effect.flatMap(StoreAdmin, (admin) => Effect.as(admin.ping, { status: "ok" as const }))
        },
        successStatus: 200,
        response: HealthView,
        errorStatuses: [503]
      }
    ]
  }
]
