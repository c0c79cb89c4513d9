// The public surface of @accord/core, listed name by name: what is not here is internal to the package.

// The contract, re-exported for embedders (its own package is @accord/contract): field values, bodies and views,
// operations and routes, problem codes and declared errors, the OpenAPI document
export {
  apiRoutes,
  defineOperation,
  DOMAIN_ERROR_CODES,
  DOMAIN_ERROR_STATUS,
  Email,
  errorStatusesOf,
  FIELD_ISSUE_CODES,
  HealthView,
  makeOpenApiDocument,
  MASKED_PASSWORD,
  operations,
  Password,
  PaymentMethodId,
  PaymentMethodList,
  PaymentMethodView,
  PlanEntryBody,
  PlanEntryView,
  PreferencesPatchBody,
  PreferencesView,
  PROBLEM_CODE_STATUS,
  PROBLEM_CODES,
  PROBLEM_CONTENT_TYPE,
  problemCodesOf,
  ProblemSchema,
  REASON_PHRASES,
  SetDefaultBody,
  StrictBoolean,
  Timestamp,
  TimezoneOffset,
  trimAsciiWhitespace,
  type Access,
  type BodyOf,
  type BodySpec,
  type DomainErrorTag,
  type FieldIssue,
  type FieldIssueCode,
  type HttpMethod,
  type Operation,
  type OperationId,
  type Operations,
  type OperationSpec,
  type OperationTag,
  type ParamsOf,
  type ProblemCode,
  type ProblemCodeOf,
  type ProblemCodeSource,
  type Route,
  type SuccessSpec,
  type TypedOperation
} from "@accord/contract"

// Domain: values, records and errors (no HTTP, no wire form)
export { ClientId, UserId } from "./domain/ids.js"
export { LanguageTag } from "./domain/language.js"
export { emailKey } from "./domain/email.js"
export { PasswordHash } from "./domain/password.js"
export { isWellFormedToken, TOKEN_PATTERN } from "./domain/token.js"
export { notBefore } from "./domain/timestamp.js"
export { Principal } from "./domain/principal.js"
export type { PlanEntry } from "./domain/plan-entry.js"
export { applyPatch, defaultPreferenceValues, type Preferences, type PreferencesPatch } from "./domain/preferences.js"
export type { PaymentMethod } from "./domain/payment-method.js"
export { Seed, type SeedInput, type SeedReport } from "./domain/seed.js"
export {
  InsufficientScope,
  NAMES_RESOURCE,
  NotFound,
  PreconditionFailed,
  Unauthenticated,
  Unavailable,
  ValidationError,
  type DomainError
} from "./domain/errors.js"
export { decoderFor, pathParamsDecoderFor, toValidationError } from "./domain/decode.js"

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

// HTTP: the contract's operations bound to the use cases, the handler and problems
export {
  implementations,
  type CallerOf,
  type DeclaredErrorOf,
  type Implementation,
  type Implementations,
  type InputOf
} from "./http/implementation.js"
export {
  decodePreferencesPatch,
  toPatch,
  toTimestamp,
  toPaymentMethodView,
  toPlanEntryView,
  toPreferencesView
} from "./http/wire.js"
export { DEFAULT_BODY_LIMIT, DEFAULT_MAX_PATH_LENGTH, DEFAULT_PREFIX, makeHttpHandler } from "./http/handler.js"
export { problemBody, problemOf, problems, type Problem } from "./http/problem.js"
export { isJsonObject, MAX_JSON_DEPTH, readJson, type JsonReadResult } from "./http/json-body.js"
export { rateLimitHeaders, type RateLimiter, type RateLimitQuota } from "./http/rate-limit.js"
export { KNOWN_HTTP_METHODS, methodLabel, OTHER_METHOD } from "./http/method-label.js"
export { headerValue } from "./http/header-value.js"
export type {
  AccordRuntime,
  AccordServices,
  BodyReadResult,
  DocsAssets,
  HeaderLookup,
  HeaderRecord,
  HttpHandler,
  HttpHandlerOptions,
  HttpHeaders,
  HttpRequest,
  HttpResponse,
  HttpTracing,
  RequestLog,
  StaticAsset,
  StaticAssetEncodings,
  StoreServices
} from "./http/types.js"
