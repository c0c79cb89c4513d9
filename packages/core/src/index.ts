// The public surface of @accord/core, listed name by name: what is not here is internal to the package.

// Domain: values and their Schemas
export { ClientId, PaymentMethodId, UserId } from "./domain/ids.js"
export { Email, emailKey, trimAsciiWhitespace } from "./domain/email.js"
export { LanguageTag } from "./domain/language.js"
export { TimezoneOffset } from "./domain/timezone.js"
export { Password, PasswordHash } from "./domain/password.js"
export { StrictBoolean } from "./domain/boolean.js"
export { isWellFormedToken, TOKEN_PATTERN } from "./domain/token.js"
export { notBefore, Timestamp, toTimestamp } from "./domain/timestamp.js"
export { Principal } from "./domain/principal.js"
export { MASKED_PASSWORD, PlanEntryBody, PlanEntryView, type PlanEntry } from "./domain/plan-entry.js"
export {
  applyPatch,
  decodePreferencesPatch,
  defaultPreferenceValues,
  PreferencesPatchBody,
  PreferencesView,
  toPatch,
  toPreferencesView,
  type Preferences,
  type PreferencesPatch
} from "./domain/preferences.js"
export {
  PaymentMethodList,
  PaymentMethodView,
  SetDefaultBody,
  toPaymentMethodView,
  type PaymentMethod
} from "./domain/payment-method.js"
export { Seed, type SeedInput, type SeedReport } from "./domain/seed.js"

// Domain: errors and field issues
export {
  InsufficientScope,
  NotFound,
  Unauthenticated,
  Unavailable,
  ValidationError,
  type DomainError
} from "./domain/errors.js"
export { FIELD_ISSUE_CODES, type FieldIssue, type FieldIssueCode } from "./domain/field-issue.js"
export { decoderFor, toValidationError } from "./domain/decode.js"

// Ports
export { Authenticator } from "./ports/authenticator.js"
export { PasswordHasher } from "./ports/password-hasher.js"
export { PaymentMethods } from "./ports/payment-methods.js"
export { PlanEntries } from "./ports/plan-entries.js"
export { PreferencesStore } from "./ports/preferences-store.js"
export { StoreAdmin } from "./ports/store-admin.js"
export { withPortSpans } from "./ports/traced-ports.js"

// Use cases
export { createPublicPlanEntry } from "./use-cases/create-public-plan-entry.js"
export { getLanguagePreferences, updateLanguagePreferences } from "./use-cases/language-preferences.js"
export { listPaymentMethods, setDefaultPaymentMethod } from "./use-cases/payment-methods.js"

// HTTP: the route table, the handler, problems and the OpenAPI document
export {
  apiRoutes,
  defineOperation,
  operations,
  type Access,
  type BodyOf,
  type BodySpec,
  type CallerOf,
  type DomainErrorTag,
  type HttpMethod,
  type Operation,
  type OperationId,
  type Operations,
  type OperationSpec,
  type ParamsOf,
  type Route,
  type SuccessSpec,
  type TypedOperation
} from "./http/routes.js"
export { DEFAULT_BODY_LIMIT, DEFAULT_MAX_PATH_LENGTH, DEFAULT_PREFIX, makeHttpHandler } from "./http/handler.js"
export {
  DOMAIN_ERROR_CODES,
  DOMAIN_ERROR_STATUS,
  errorStatusesOf,
  PROBLEM_CODE_STATUS,
  PROBLEM_CODES,
  PROBLEM_CONTENT_TYPE,
  problemBody,
  problemCodesOf,
  problemOf,
  problems,
  REASON_PHRASES,
  type Problem,
  type ProblemCode,
  type ProblemCodeOf,
  type ProblemCodeSource
} from "./http/problem.js"
export { makeOpenApiDocument, ProblemSchema } from "./http/openapi.js"
export { isJsonObject, MAX_JSON_DEPTH, readJson, type JsonReadResult } from "./http/json-body.js"
export type { RateLimiter } from "./http/rate-limit.js"
export { KNOWN_HTTP_METHODS, methodLabel, OTHER_METHOD } from "./http/method-label.js"
export type {
  AccordRuntime,
  AccordServices,
  BodyReadResult,
  DocsAssets,
  HttpHandler,
  HttpHandlerOptions,
  HttpRequest,
  HttpResponse,
  HttpTracing,
  RequestLog,
  ClientErrorLog,
  RunningServer,
  StandaloneServerOptions,
  StaticAsset,
  StoreServices
} from "./http/types.js"
