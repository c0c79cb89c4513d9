import { NodeHttpServer } from "@effect/platform-node"
import {
  ByteSize,
  Context,
  Effect,
  Layer,
  ManagedRuntime,
  Redacted,
  Schema,
  SchemaIssue,
  SchemaTransformation
} from "effect"
import { HttpEffect, HttpIncomingMessage, HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSchema,
  HttpApiSecurity
} from "effect/http-api"
import { createServer } from "node:http"
import {
  authenticateToken,
  canonicalLanguage,
  headersBesideContentType,
  LANGUAGE_MAX_LENGTH,
  makeDefaultPaymentMethod,
  mergePreferences,
  NOT_FOUND_DETAIL,
  problemBody,
  READ_ONLY_FIELDS,
  TIMEZONE,
  UNAUTHORIZED_DETAIL,
  type BareStore
} from "./bare-domain.js"
import { BODY_LIMIT, type BareServer } from "./bare-servers.js"
import { LANGUAGE_PATH } from "./workload.js"

/**
 * Peer: effect 4's HttpApi, written as effect's documentation writes it (effect/ai-docs/src/51_http-server): an
 * `HttpApi` of `HttpApiGroup`s of `HttpApiEndpoint`s with Schema payloads, handlers from `HttpApiBuilder.group`, a
 * bearer security middleware (`HttpApiMiddleware.Service` with `HttpApiSecurity.bearer`) that provides the current
 * user, served by `HttpRouter.serve` on `NodeHttpServer.layer`. It does the bare baselines' work through
 * bare-domain.ts: the same token-digest lookup, the same field checks (as Schema checks with bare-domain's limits),
 * the same merges, response bytes and headers.
 *
 * Where it differs from the bare baselines:
 * - a body that fails its schema (or is not JSON) gets HttpApi's documented answer to a request that fails
 *   decoding, an empty 400, raised before any handler runs (bare: a problem+json body, `invalid_body` or
 *   `validation_failed`); reshaping it would take a router middleware catching HttpApiSchemaError defects, which
 *   is not how the documentation writes an API;
 * - the security scheme is `Bearer` only (bare also takes `Token <token>`); the middleware gets the token with
 *   the scheme taken off and calls bare-domain's authenticateToken;
 * - a missing content type is read as JSON (bare Fastify: 415 for a body without one), and a JSON `null` body on
 *   the payment-method route counts as no body (bare: 400);
 * - the request logger of `HttpRouter.serve` is off, as Fastify's is in every server of the bench.
 * On the two benchmarked requests, 401 and 404 it answers bare Fastify's status, headers and bytes.
 */

// ---------------------------------------------------------------------------------------------------------------
// The API, as a client would share it
// ---------------------------------------------------------------------------------------------------------------

/** The bodies' media types, as bare-domain sends them (HttpApi's default is `application/json` without charset). */
const json = HttpApiSchema.asJson({ contentType: "application/json; charset=utf-8" })
const problemJson = HttpApiSchema.asJson({ contentType: "application/problem+json; charset=utf-8" })

/** RFC 9457 problem body, in bare-domain's member order. */
const ProblemFields = {
  type: Schema.String,
  title: Schema.String,
  status: Schema.Number,
  detail: Schema.String,
  code: Schema.String
}

export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")(ProblemFields, { httpApiStatus: 401 }) {}

export class NotFound extends Schema.Error<NotFound>("NotFound")(ProblemFields, { httpApiStatus: 404 }) {}

export class CurrentUser extends Context.Service<CurrentUser, string>()("bench/peer-effect/CurrentUser") {}

export class Authorization extends HttpApiMiddleware.Service<Authorization, { provides: CurrentUser }>()(
  "bench/peer-effect/Authorization",
  {
    security: { bearer: HttpApiSecurity.bearer },
    error: Unauthorized.pipe(problemJson)
  }
) {}

/** A BCP 47 tag, decoded to its canonical form. */
const LanguageTag = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(LANGUAGE_MAX_LENGTH)).pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transformEffect({
      decode: (tag, options) => {
        const canonical = canonicalLanguage(tag)
        return canonical === undefined
          ? Effect.fail(
              new SchemaIssue.InvalidValue({ message: "Not a well-formed BCP 47 language tag" }, tag, options)
            )
          : Effect.succeed(canonical)
      },
      encode: (tag) => Effect.succeed(tag)
    })
  )
)

const [readOnlyId, readOnlyCreatedAt, readOnlyUpdatedAt] = READ_ONLY_FIELDS

/** Merge-PUT: every field optional, the read-only fields of the record accepted and ignored (unknown fields are refused by the API's PayloadParseOptions). */
const UpdateLanguagePreferences = Schema.Struct({
  language: Schema.optionalKey(LanguageTag),
  timezone: Schema.optionalKey(
    Schema.Number.check(
      Schema.isInt(),
      Schema.isBetween({ minimum: TIMEZONE.minimum, maximum: TIMEZONE.maximum }),
      Schema.isMultipleOf(TIMEZONE.step)
    )
  ),
  mfa_enabled: Schema.optionalKey(Schema.Boolean),
  [readOnlyId]: Schema.optionalKey(Schema.Unknown),
  [readOnlyCreatedAt]: Schema.optionalKey(Schema.Unknown),
  [readOnlyUpdatedAt]: Schema.optionalKey(Schema.Unknown)
})

const LanguagePreferences = Schema.Struct({
  id: Schema.Number,
  language: Schema.String,
  timezone: Schema.Number,
  mfa_enabled: Schema.Boolean,
  created_at: Schema.String,
  updated_at: Schema.String
})

/** `{}` or `{"is_default": true}`; no body at all is the endpoint's second payload, `Schema.Null` (HttpApi decodes an empty JSON body as null when a payload encodes to null). */
const SetDefaultPaymentMethod = Schema.Struct({ is_default: Schema.optionalKey(Schema.Literal(true)) })

const PaymentMethod = Schema.Struct({
  id: Schema.String,
  is_default: Schema.Boolean,
  created_at: Schema.String,
  updated_at: Schema.String
})

export class UsersGroup extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.put("updateLanguagePreferences", LANGUAGE_PATH, {
      payload: UpdateLanguagePreferences,
      success: LanguagePreferences.pipe(json)
    })
  )
  .middleware(Authorization) {}

export class PaymentsGroup extends HttpApiGroup.make("payments")
  .add(
    HttpApiEndpoint.put("setDefaultPaymentMethod", "/api/payments/v1/payment-methods/:id/", {
      params: { id: Schema.String },
      payload: [SetDefaultPaymentMethod, Schema.Null],
      success: PaymentMethod.pipe(json),
      error: NotFound.pipe(problemJson)
    })
  )
  .middleware(Authorization) {}

export class Api extends HttpApi.make("bench")
  .add(UsersGroup)
  .add(PaymentsGroup)
  // Strict bodies as in bare-domain (unknown fields are refused); headers keep Schema's defaults.
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" }) {}

// ---------------------------------------------------------------------------------------------------------------
// The server
// ---------------------------------------------------------------------------------------------------------------

/** The state, shared with the bare baselines' code. */
class Store extends Context.Service<Store, BareStore>()("bench/peer-effect/Store") {}

const AuthorizationLive = Layer.effect(
  Authorization,
  Effect.gen(function* () {
    const store = yield* Store
    return Authorization.of({
      bearer: (httpEffect, { credential }) => {
        const user = authenticateToken(store, Redacted.value(credential))
        return user === undefined
          ? Effect.fail(new Unauthorized(problemBody(401, "invalid_token", UNAUTHORIZED_DETAIL)))
          : Effect.provideService(httpEffect, CurrentUser, user)
      }
    })
  })
)

const UsersLive = HttpApiBuilder.group(
  Api,
  "users",
  Effect.fn(function* (handlers) {
    const store = yield* Store
    return handlers.handle(
      "updateLanguagePreferences",
      Effect.fn(function* ({ payload }) {
        const user = yield* CurrentUser
        return mergePreferences(store, user, payload)
      })
    )
  })
)

const PaymentsLive = HttpApiBuilder.group(
  Api,
  "payments",
  Effect.fn(function* (handlers) {
    const store = yield* Store
    return handlers.handle(
      "setDefaultPaymentMethod",
      Effect.fn(function* ({ params }) {
        const user = yield* CurrentUser
        const view = makeDefaultPaymentMethod(store, user, params.id)
        if (view === undefined) return yield* new NotFound(problemBody(404, "not_found", NOT_FOUND_DETAIL))
        return view
      })
    )
  })
)

/**
 * bare-domain's headers on every answer (cache-control, x-content-type-options, a fresh x-request-id), through a
 * pre-response handler so that HttpApi's own 400s get them too; the content type comes from the schemas above.
 */
const BareHeaders = HttpRouter.middleware(
  (httpEffect) =>
    HttpEffect.withPreResponseHandler(httpEffect, (_request, response) =>
      Effect.succeed(HttpServerResponse.setHeaders(response, headersBesideContentType()))
    ),
  { global: true }
)

export const startEffectHttpApi = async (bareStore: BareStore): Promise<BareServer> => {
  const ApiRoutes = HttpApiBuilder.layer(Api).pipe(
    Layer.provide([UsersLive, PaymentsLive]),
    Layer.provide(AuthorizationLive),
    Layer.provide(Layer.succeed(Store)(bareStore)),
    // The bare servers' body limit (413 above it); HttpApi reads bodies of any size by default.
    Layer.provide(Layer.succeed(HttpIncomingMessage.MaxBodySize)(ByteSize.bytes(BODY_LIMIT)))
  )
  const ServerLive = HttpRouter.serve(Layer.mergeAll(ApiRoutes, BareHeaders), {
    disableLogger: true,
    disableListenLog: true
  }).pipe(Layer.provideMerge(NodeHttpServer.layer(createServer, { port: 0, host: "127.0.0.1" })))
  const runtime = ManagedRuntime.make(ServerLive)
  const { address } = Context.get(await runtime.context(), HttpServer.HttpServer)
  return { url: HttpServer.formatAddress(address), close: () => runtime.dispose() }
}
