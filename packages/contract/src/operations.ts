import { Schema } from "effect"
import { PaymentMethodId } from "./fields/payment-method-id.js"
import { HealthView } from "./health.js"
import { defineOperation } from "./operation.js"
import { PaymentMethodList, PaymentMethodView, SetDefaultBody } from "./payment-method.js"
import { PlanEntryBody, PlanEntryView } from "./plan-entry.js"
import { PreferencesPatchBody, PreferencesView } from "./preferences.js"

/**
 * A table of operations whose every key is the operation's own id (a client's method names are these keys). The
 * constraint names only `operationId`: a wider one would be a contextual type that `defineOperation` infers from.
 */
const keyedByOperationId = <const T extends { readonly [K in keyof T]: { readonly operationId: K } }>(table: T): T =>
  table

/**
 * Accord's operations by operationId, with the static types of their Schemas: the single source of routing, access,
 * decoding, errors, the OpenAPI document and `@accord/client`. `apiRoutes` groups it by path, in this order; core's
 * implementation map gives each operation its use case, by the same keys.
 */
export const operations = keyedByOperationId({
  createPublicPlanEntry: defineOperation({
    operationId: "createPublicPlanEntry",
    method: "POST",
    path: "/plans/v1/subscription-plans/public/",
    access: "anyCredential",
    body: { schema: PlanEntryBody, required: true },
    success: { status: 201, schema: PlanEntryView },
    errors: ["Unavailable"]
  }),
  getLanguagePreferences: defineOperation({
    operationId: "getLanguagePreferences",
    method: "GET",
    path: "/users/v1/preferences/language/",
    access: "user",
    success: { status: 200, schema: PreferencesView },
    errors: ["Unavailable"],
    conditional: "ifNoneMatch"
  }),
  updateLanguagePreferences: defineOperation({
    operationId: "updateLanguagePreferences",
    method: "PUT",
    path: "/users/v1/preferences/language/",
    access: "user",
    body: { schema: PreferencesPatchBody, required: true },
    success: { status: 200, schema: PreferencesView },
    errors: ["PreconditionFailed", "Unavailable"],
    conditional: "ifMatchRequirable"
  }),
  listPaymentMethods: defineOperation({
    operationId: "listPaymentMethods",
    method: "GET",
    path: "/payments/v1/payment-methods/",
    access: "user",
    success: { status: 200, schema: PaymentMethodList },
    errors: ["Unavailable"],
    conditional: "ifNoneMatch"
  }),
  setDefaultPaymentMethod: defineOperation({
    operationId: "setDefaultPaymentMethod",
    method: "PUT",
    path: "/payments/v1/payment-methods/{id}/",
    access: "user",
    // The body only confirms the operation (`{}` or `{"is_default": true}`); the id says which method.
    body: { schema: SetDefaultBody, required: false },
    params: Schema.Struct({ id: PaymentMethodId }),
    success: { status: 200, schema: PaymentMethodView },
    errors: ["NotFound", "PreconditionFailed", "Unavailable"],
    conditional: "ifMatch"
  }),
  health: defineOperation({
    operationId: "health",
    method: "GET",
    path: "/health",
    access: "public",
    success: { status: 200, schema: HealthView },
    errors: ["Unavailable"]
  }),
  liveness: defineOperation({
    operationId: "liveness",
    method: "GET",
    path: "/health/live",
    access: "public",
    success: { status: 200, schema: HealthView },
    errors: []
  }),
  readiness: defineOperation({
    operationId: "readiness",
    method: "GET",
    path: "/health/ready",
    access: "public",
    success: { status: 200, schema: HealthView },
    errors: ["Unavailable"],
    unavailableWhileDraining: true
  })
})

export type Operations = typeof operations
export type OperationId = keyof Operations
