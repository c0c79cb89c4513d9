import { Effect, Schema } from "effect"
import type { DomainError } from "../domain/errors.js"
import { PaymentMethodId, type UserId } from "../domain/ids.js"
import { PaymentMethodList, PaymentMethodView, SetDefaultBody, toPaymentMethodView } from "../domain/payment-method.js"
import { MASKED_PASSWORD, PlanEntryBody, PlanEntryView } from "../domain/plan-entry.js"
import { PreferencesPatchBody, PreferencesView, toPatch, toPreferencesView } from "../domain/preferences.js"
import type { Principal } from "../domain/principal.js"
import { StoreAdmin } from "../ports/store-admin.js"
import { createPublicPlanEntry } from "../use-cases/create-public-plan-entry.js"
import { getLanguagePreferences, updateLanguagePreferences } from "../use-cases/language-preferences.js"
import { listPaymentMethods, setDefaultPaymentMethod } from "../use-cases/payment-methods.js"
import type { AccordServices } from "./types.js"

export type HttpMethod = "GET" | "POST" | "PUT"

/**
 * Who may call an operation (docs/api.md, "Authentication"): anyone, any valid credential (a user's or an
 * application's), or a user only.
 */
export type Access = "public" | "anyCredential" | "user"

/** What the operation's program is given about its caller, by access. */
export type CallerOf<A extends Access> = A extends "public" ? undefined : A extends "user" ? UserId : Principal

export type DomainErrorTag = DomainError["_tag"]

/** An operation as written in the table: typed from its Schemas, so a program gets checked values only. */
export interface OperationSpec<A extends Access, Body, Params, Tag extends DomainErrorTag, Success> {
  readonly operationId: string
  readonly method: HttpMethod
  readonly summary: string
  readonly access: A
  /** The JSON body and the Schema it is decoded with; `required: false`: no body at all counts as `{}`. */
  readonly body?: { readonly schema: Schema.Decoder<Body>; readonly required: boolean }
  /** Path parameters and their Schema; a value it refuses is 404 `not_found` (docs/api.md, "Precise rules"). */
  readonly params?: Schema.Decoder<Params>
  readonly success: { readonly status: 200 | 201; readonly schema: Schema.Codec<Success, unknown> }
  /** The domain errors the program may fail with; their statuses and the OpenAPI errors derive from this list. */
  readonly errors: ReadonlyArray<Tag>
  readonly run: (
    caller: CallerOf<A>,
    input: { readonly body: Body; readonly params: Params }
  ) => Effect.Effect<Success, Extract<DomainError, { readonly _tag: Tag }>, AccordServices>
}

/**
 * An operation as the handler and the OpenAPI generator read it. Its types are checked once, where the table is
 * written (`defineOperation`); the handler passes `run` only values decoded by the operation's own Schemas.
 */
export interface Operation {
  readonly operationId: string
  readonly method: HttpMethod
  readonly summary: string
  readonly access: Access
  readonly body?: { readonly schema: Schema.Decoder<unknown>; readonly required: boolean }
  readonly params?: Schema.Decoder<unknown>
  readonly success: { readonly status: 200 | 201; readonly schema: Schema.Top }
  readonly errors: ReadonlyArray<DomainErrorTag>
  readonly run: (
    caller: Principal | undefined,
    input: { readonly body: unknown; readonly params: unknown }
  ) => Effect.Effect<unknown, DomainError, AccordServices>
}

/** Checks an operation's types against its Schemas, then erases them for the table. */
export const defineOperation = <
  const A extends Access,
  const Tag extends DomainErrorTag,
  Success,
  Body = undefined,
  Params = undefined
>(
  spec: OperationSpec<A, Body, Params, Tag, Success>
): Operation => ({
  ...spec,
  run: (caller, input) => {
    // The handler runs this only after the access check: a user operation gets a User principal.
    const forCaller = (
      spec.access === "public" ? undefined : spec.access === "user" ? userIdOf(caller) : caller
    ) as CallerOf<A>
    return spec.run(forCaller, input as { readonly body: Body; readonly params: Params })
  }
})

const userIdOf = (caller: Principal | undefined): UserId | undefined =>
  caller?._tag === "User" ? caller.userId : undefined

export interface Route {
  /** Path relative to the mount prefix, as written in docs/api.md ("Routes") and the OpenAPI document. */
  readonly path: string
  /** Exact routes do not also answer without their trailing slash (health, openapi.json, docs). */
  readonly exact: boolean
  readonly operations: ReadonlyArray<Operation>
}

const HealthView = Schema.Struct({ status: Schema.Literal("ok") }).annotate({ identifier: "Health" })

/** The route table of Accord's API: the single source of routing, access, decoding, errors and the OpenAPI document. */
export const apiRoutes: ReadonlyArray<Route> = [
  {
    path: "/plans/v1/subscription-plans/public/",
    exact: false,
    operations: [
      defineOperation({
        operationId: "createPublicPlanEntry",
        method: "POST",
        summary: "Create a public subscription plan entry",
        access: "anyCredential",
        body: { schema: PlanEntryBody, required: true },
        success: { status: 201, schema: PlanEntryView },
        errors: ["Unavailable"],
        run: (_caller, { body }) =>
          Effect.map(createPublicPlanEntry(body), (entry) => ({ email: entry.email, password: MASKED_PASSWORD }))
      })
    ]
  },
  {
    path: "/users/v1/preferences/language/",
    exact: false,
    operations: [
      defineOperation({
        operationId: "getLanguagePreferences",
        method: "GET",
        summary: "Read the user's language preferences",
        access: "user",
        success: { status: 200, schema: PreferencesView },
        errors: ["Unavailable"],
        run: (userId) => Effect.map(getLanguagePreferences(userId), toPreferencesView)
      }),
      defineOperation({
        operationId: "updateLanguagePreferences",
        method: "PUT",
        summary: "Update the user's language preferences (merge)",
        access: "user",
        body: { schema: PreferencesPatchBody, required: true },
        success: { status: 200, schema: PreferencesView },
        errors: ["Unavailable"],
        run: (userId, { body }) => Effect.map(updateLanguagePreferences(userId, toPatch(body)), toPreferencesView)
      })
    ]
  },
  {
    path: "/payments/v1/payment-methods/",
    exact: false,
    operations: [
      defineOperation({
        operationId: "listPaymentMethods",
        method: "GET",
        summary: "List the user's payment methods, ordered by id",
        access: "user",
        success: { status: 200, schema: PaymentMethodList },
        errors: ["Unavailable"],
        run: (userId) =>
          Effect.map(listPaymentMethods(userId), (methods) => ({ data: methods.map(toPaymentMethodView) }))
      })
    ]
  },
  {
    path: "/payments/v1/payment-methods/{id}/",
    exact: false,
    operations: [
      defineOperation({
        operationId: "setDefaultPaymentMethod",
        method: "PUT",
        summary: "Set one of the user's payment methods as the default",
        access: "user",
        // The body only confirms the operation (`{}` or `{"is_default": true}`); the id says which method.
        body: { schema: SetDefaultBody, required: false },
        params: Schema.Struct({ id: PaymentMethodId }),
        success: { status: 200, schema: PaymentMethodView },
        errors: ["NotFound", "Unavailable"],
        run: (userId, { params }) => Effect.map(setDefaultPaymentMethod(userId, params.id), toPaymentMethodView)
      })
    ]
  },
  {
    path: "/health",
    exact: true,
    operations: [
      defineOperation({
        operationId: "health",
        method: "GET",
        summary: "Liveness of the service and its store",
        access: "public",
        success: { status: 200, schema: HealthView },
        errors: ["Unavailable"],
        run: () => Effect.flatMap(StoreAdmin, (admin) => Effect.as(admin.ping, { status: "ok" as const }))
      })
    ]
  }
]
