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

/**
 * The area an operation belongs to: the OpenAPI document's tags, one section each on the API reference page (their
 * descriptions are in openapi.ts). The first path segment for the three SPEC areas; `service` for health.
 */
export type OperationTag = "plans" | "users" | "payments" | "service"

/** A JSON body an operation reads: the Schema it is decoded with (a client sends its Encoded side) and whether it may be absent. */
export interface BodySpec<S extends Schema.Decoder<unknown> = Schema.Decoder<unknown>> {
  readonly schema: S
  /** `false`: no body at all counts as `{}` (docs/api.md, "Precise rules"). */
  readonly required: boolean
}

/** The success answer: its status and the Schema of its JSON body (a client decodes with it). */
export interface SuccessSpec<S extends Schema.Codec<unknown, unknown> = Schema.Codec<unknown, unknown>> {
  readonly status: 200 | 201
  readonly schema: S
}

/** What `run` is given as its body: the body Schema's decoded type, or undefined when the operation reads none. */
export type BodyOf<B extends BodySpec | undefined> = B extends BodySpec<infer S> ? S["Type"] : undefined

/** What `run` is given as its path parameters: their Schema's decoded type, or undefined when the path has none. */
export type ParamsOf<P extends Schema.Decoder<unknown> | undefined> =
  P extends Schema.Decoder<unknown> ? P["Type"] : undefined

/**
 * An operation as written in the table: typed from its Schemas, so a program gets checked values only. The literal
 * types of its id, method, path and access and the static types of its Schemas are kept (see TypedOperation).
 */
export interface OperationSpec<
  Id extends string,
  M extends HttpMethod,
  Path extends string,
  A extends Access,
  B extends BodySpec | undefined,
  P extends Schema.Decoder<unknown> | undefined,
  Success extends SuccessSpec,
  Tag extends DomainErrorTag
> {
  readonly operationId: Id
  readonly method: M
  /** Relative to the mount prefix, as docs/api.md ("Routes") writes it; `{name}` is a path parameter. */
  readonly path: Path
  /** One line, the OpenAPI `summary`. */
  readonly summary: string
  /** What a caller needs to know beyond the summary (OpenAPI `description`, CommonMark); docs/api.md is the contract. */
  readonly description: string
  /** Its area: one OpenAPI tag. */
  readonly tag: OperationTag
  readonly access: A
  /** The JSON body and the Schema it is decoded with; absent: the operation reads no body. */
  readonly body?: B
  /** Path parameters and their Schema; a value it refuses is 404 `not_found` (docs/api.md, "Precise rules"). */
  readonly params?: P
  readonly success: Success
  /** The domain errors the program may fail with; their statuses, problem codes and the OpenAPI errors derive from this list. */
  readonly errors: ReadonlyArray<Tag>
  /**
   * A readiness probe: answered 503 `unavailable` without running while the host drains (`HttpHandlerOptions`
   * `isDraining`), so it must declare `Unavailable`.
   */
  readonly unavailableWhileDraining?: "Unavailable" extends Tag ? boolean : false
  readonly run: (
    caller: CallerOf<A>,
    input: { readonly body: BodyOf<B>; readonly params: ParamsOf<P> }
  ) => Effect.Effect<Success["schema"]["Type"], Extract<DomainError, { readonly _tag: Tag }>, AccordServices>
}

/**
 * An operation as the handler and the OpenAPI generator read it. Its types are checked once, where the table is
 * written (`defineOperation`); the handler passes `run` only values decoded by the operation's own Schemas.
 */
export interface Operation {
  readonly operationId: string
  readonly method: HttpMethod
  /** Relative to the mount prefix, with `{name}` for a path parameter. */
  readonly path: string
  readonly summary: string
  readonly description: string
  readonly tag: OperationTag
  readonly access: Access
  /** Undefined when the operation reads no body. */
  readonly body: BodySpec | undefined
  /** Undefined when the path has no parameter. */
  readonly params: Schema.Decoder<unknown> | undefined
  readonly success: { readonly status: 200 | 201; readonly schema: Schema.Top }
  readonly errors: ReadonlyArray<DomainErrorTag>
  /** Answered 503 `unavailable` while the host drains, before anything runs (a readiness probe). */
  readonly unavailableWhileDraining: boolean
  readonly run: (
    caller: Principal | undefined,
    input: { readonly body: unknown; readonly params: unknown }
  ) => Effect.Effect<unknown, DomainError, AccordServices>
}

/**
 * An operation with the static types it was written with: what a typed client derives its methods from (the body
 * Schema's Encoded side is what it sends, the success Schema what it decodes, `ProblemCodeOf` the codes it may be
 * answered). The erased `Operation` view of the same object is what the handler and the OpenAPI generator read.
 */
export interface TypedOperation<
  Id extends string = string,
  M extends HttpMethod = HttpMethod,
  Path extends string = string,
  A extends Access = Access,
  B extends BodySpec | undefined = BodySpec | undefined,
  P extends Schema.Decoder<unknown> | undefined = Schema.Decoder<unknown> | undefined,
  Success extends SuccessSpec = SuccessSpec,
  Tag extends DomainErrorTag = DomainErrorTag
> extends Operation {
  readonly operationId: Id
  readonly method: M
  readonly path: Path
  readonly access: A
  readonly body: B
  readonly params: P
  readonly success: Success
  readonly errors: ReadonlyArray<Tag>
}

/** Checks an operation's types against its Schemas; keeps them on the result, and erases them from `run`. */
export const defineOperation = <
  const Id extends string,
  const M extends HttpMethod,
  const Path extends string,
  const A extends Access,
  const Success extends SuccessSpec,
  const Tag extends DomainErrorTag,
  const B extends BodySpec | undefined = undefined,
  P extends Schema.Decoder<unknown> | undefined = undefined
>(
  spec: OperationSpec<Id, M, Path, A, B, P, Success, Tag>
): TypedOperation<Id, M, Path, A, B, P, Success, Tag> => ({
  operationId: spec.operationId,
  method: spec.method,
  path: spec.path,
  summary: spec.summary,
  description: spec.description,
  tag: spec.tag,
  access: spec.access,
  // Absent in the spec means absent in the type too (B and P default to undefined).
  body: spec.body as B,
  params: spec.params as P,
  success: spec.success,
  errors: spec.errors,
  unavailableWhileDraining: spec.unavailableWhileDraining ?? false,
  run: (caller, input) => {
    // The handler runs this only after the access check: a user operation gets a User principal.
    const forCaller = (
      spec.access === "public" ? undefined : spec.access === "user" ? userIdOf(caller) : caller
    ) as CallerOf<A>
    return spec.run(forCaller, input as { readonly body: BodyOf<B>; readonly params: ParamsOf<P> })
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

const LIVE = Effect.succeed({ status: "ok" as const })
const pingStore = Effect.flatMap(StoreAdmin, (admin) => Effect.as(admin.ping, { status: "ok" as const }))

/**
 * A table of operations whose every key is the operation's own id (a client's method names are these keys). The
 * constraint names only `operationId`: a wider one would be a contextual type that `defineOperation` infers from.
 */
const keyedByOperationId = <const T extends { readonly [K in keyof T]: { readonly operationId: K } }>(table: T): T =>
  table

/**
 * Accord's operations by operationId, with the static types of their Schemas: the single source of routing, access,
 * decoding, errors, the OpenAPI document and `@accord/client`. `apiRoutes` is built from it, in this order.
 */
export const operations = keyedByOperationId({
  createPublicPlanEntry: defineOperation({
    operationId: "createPublicPlanEntry",
    method: "POST",
    path: "/plans/v1/subscription-plans/public/",
    summary: "Create a public subscription plan entry",
    description:
      "Records a sign-up: `email` and `password`, both required, no other field. The email is trimmed and stored with its domain lower-cased; the password (8 to 128 characters) is stored only as a salted scrypt hash and is never returned (the response shows `********`). An email that already has an entry gets the same 201 and changes nothing. Any valid credential may call it, a user's or an application's. When the store is unreachable or password hashing is saturated, the answer is 503 with `Retry-After`.",
    tag: "plans",
    access: "anyCredential",
    body: { schema: PlanEntryBody, required: true },
    success: { status: 201, schema: PlanEntryView },
    errors: ["Unavailable"],
    run: (_caller, { body }) =>
      Effect.map(createPublicPlanEntry(body), (entry): PlanEntryView => ({
        email: entry.email,
        password: MASKED_PASSWORD
      }))
  }),
  getLanguagePreferences: defineOperation({
    operationId: "getLanguagePreferences",
    method: "GET",
    path: "/users/v1/preferences/language/",
    summary: "Read the user's language preferences",
    description:
      "The caller's preferences record; the first read creates it with the defaults (`language` `en`, `timezone` 0, `mfa_enabled` false). Needs a user credential (an application's is 403).",
    tag: "users",
    access: "user",
    success: { status: 200, schema: PreferencesView },
    errors: ["Unavailable"],
    run: (userId) => Effect.map(getLanguagePreferences(userId), toPreferencesView)
  }),
  updateLanguagePreferences: defineOperation({
    operationId: "updateLanguagePreferences",
    method: "PUT",
    path: "/users/v1/preferences/language/",
    summary: "Update the user's language preferences (merge)",
    description:
      "Sets each field the body has and keeps the others (`{}` changes nothing and returns the record). `language` is a BCP 47 tag, stored canonicalised (`EN-us` becomes `en-US`); `timezone` is minutes east of UTC, -720 to 840 in steps of 15; `mfa_enabled` is a JSON boolean. `id`, `created_at` and `updated_at` may be sent back as read and are ignored; any other field is 400. `updated_at` moves only when a value changes. Needs a user credential.",
    tag: "users",
    access: "user",
    body: { schema: PreferencesPatchBody, required: true },
    success: { status: 200, schema: PreferencesView },
    errors: ["Unavailable"],
    run: (userId, { body }) => Effect.map(updateLanguagePreferences(userId, toPatch(body)), toPreferencesView)
  }),
  listPaymentMethods: defineOperation({
    operationId: "listPaymentMethods",
    method: "GET",
    path: "/payments/v1/payment-methods/",
    summary: "List the user's payment methods, ordered by id",
    description:
      'Every payment method of the caller, as `{"data": [...]}`, ordered by id in code-point order; at most one has `is_default: true`. Needs a user credential.',
    tag: "payments",
    access: "user",
    success: { status: 200, schema: PaymentMethodList },
    errors: ["Unavailable"],
    run: (userId) => Effect.map(listPaymentMethods(userId), (methods) => ({ data: methods.map(toPaymentMethodView) }))
  }),
  setDefaultPaymentMethod: defineOperation({
    operationId: "setDefaultPaymentMethod",
    method: "PUT",
    path: "/payments/v1/payment-methods/{id}/",
    summary: "Set one of the user's payment methods as the default",
    description:
      'Makes the method `{id}` the caller\'s default and the previous default (if any) not, atomically: a user never has two defaults. The body is optional: none, `{}` or `{"is_default": true}` (`false` is 400). An id that does not exist, belongs to another user or is not 1 to 100 characters of `[A-Za-z0-9_-]` is 404. Repeating it changes nothing and returns the same method. Needs a user credential.',
    tag: "payments",
    access: "user",
    // The body only confirms the operation (`{}` or `{"is_default": true}`); the id says which method.
    body: { schema: SetDefaultBody, required: false },
    params: Schema.Struct({ id: PaymentMethodId }),
    success: { status: 200, schema: PaymentMethodView },
    errors: ["NotFound", "Unavailable"],
    run: (userId, { params }) => Effect.map(setDefaultPaymentMethod(userId, params.id), toPaymentMethodView)
  }),
  health: defineOperation({
    operationId: "health",
    method: "GET",
    path: "/health",
    summary: "Liveness of the service and its store",
    description:
      '`{"status": "ok"}` when the service can reach its store, else 503 with `Retry-After`. Needs no credential and ignores one sent; meant for load balancers and orchestrators.',
    tag: "service",
    access: "public",
    success: { status: 200, schema: HealthView },
    errors: ["Unavailable"],
    run: () => pingStore
  }),
  liveness: defineOperation({
    operationId: "liveness",
    method: "GET",
    path: "/health/live",
    summary: "Liveness probe: the process serves",
    description:
      '`{"status": "ok"}` whenever the process answers HTTP, also while it drains or while its store is unreachable: it never calls the store, so a database outage never gets healthy processes restarted. Needs no credential and ignores one sent; meant for an orchestrator\'s liveness probe.',
    tag: "service",
    access: "public",
    success: { status: 200, schema: HealthView },
    errors: [],
    run: () => LIVE
  }),
  readiness: defineOperation({
    operationId: "readiness",
    method: "GET",
    path: "/health/ready",
    summary: "Readiness probe: the process takes new requests",
    description:
      '`{"status": "ok"}` when the service can reach its store and is not shutting down; 503 with `Retry-After` while it drains (SIGTERM) or while the store is unreachable, so a load balancer sends new requests elsewhere. Needs no credential and ignores one sent; meant for load balancers and an orchestrator\'s readiness probe.',
    tag: "service",
    access: "public",
    success: { status: 200, schema: HealthView },
    errors: ["Unavailable"],
    unavailableWhileDraining: true,
    run: () => pingStore
  })
})

export type Operations = typeof operations
export type OperationId = keyof Operations

/** Paths answered only as written, not also without their trailing slash (docs/api.md, "Routes"). */
const EXACT_PATHS: ReadonlySet<string> = new Set(["/health", "/health/live", "/health/ready"])

/** One route per path, in the order its first operation appears, holding that path's operations in table order. */
const routesOf = (table: Readonly<Record<string, Operation>>): ReadonlyArray<Route> => {
  const byPath = new Map<string, Array<Operation>>()
  for (const operation of Object.values(table)) {
    const onPath = byPath.get(operation.path)
    if (onPath === undefined) byPath.set(operation.path, [operation])
    else onPath.push(operation)
  }
  return [...byPath].map(([path, onPath]) => ({ path, exact: EXACT_PATHS.has(path), operations: onPath }))
}

/** The route table of Accord's API, grouped by path: what the handler routes and the OpenAPI document lists. */
export const apiRoutes: ReadonlyArray<Route> = routesOf(operations)
