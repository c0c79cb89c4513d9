// The public surface of @accord/contract: Accord's API as data (docs/api.md), listed name by name. It depends on effect
// and the domain's values alone (@accord/domain/values); an implementation binds to it (@accord/core), a client
// derives from it (@accord/client).

// Wire fields: the JSON forms of docs/api.md ("Precise rules") the domain's values do not have
export { StrictBoolean } from "./wire/boolean.js"
export { Timestamp, toTimestamp } from "./wire/timestamp.js"
export { QueryInt } from "./wire/query-int.js"
export { WireInt } from "./wire/wire-int.js"

// Operations, one entry each in their areas: route, access, Schemas, declared errors; their bodies and views in wire
// form (snake_case) with the mappers from the domain's records; their docs and examples
export {
  allowedMethods,
  allowHeader,
  routePattern,
  defineOperation,
  type Access,
  type Alias,
  type AliasSpec,
  type BodyOf,
  type BodySpec,
  type Conditional,
  type DocsOf,
  type ErasedOperationDocs,
  type HttpMethod,
  type Operation,
  type OperationDocs,
  type OperationSpec,
  type OperationTag,
  type ParameterDocs,
  type ParamsOf,
  type ParamsSchema,
  type QueryOf,
  type QuerySchema,
  type RecordsTouched,
  type Route,
  type SuccessEncodedOf,
  type StreamSpec,
  type SuccessSpec,
  type SuccessValueOf,
  type TypedOperation,
  type ValidationExample
} from "./operation.js"
export {
  aliasRoutes,
  apiRoutes,
  DOCUMENT_PATHS,
  operations,
  type AliasRoute,
  type OperationId,
  type Operations
} from "./operations.js"
// docs/api.md, "Versioning": deprecated operations and paths, their headers' formats
export {
  DEPRECATION_HEADER_FORMAT,
  DEPRECATION_HEADERS,
  DeprecationDeclarationError,
  deprecationHeaderValue,
  IMF_FIXDATE_FORMAT,
  makeDeprecation,
  readDeprecation,
  sunsetHeaderValue,
  type Deprecation,
  type DeprecationNotice,
  type DeprecationSpec
} from "./deprecation.js"
// The same operations as plain data for a client (also the entry @accord/contract/routes), and their generator
export { OPERATION_ROUTES } from "./operation-routes.generated.js"
export {
  operationRoutesModule,
  type ErasedOperationRoute,
  type OperationRoute,
  type OperationRoutes
} from "./operation-routes.js"
export { OPERATION_DOCS } from "./operation-docs.js"
export { EVENT_DOCS } from "./event-docs.js"
export {
  AccordEvent,
  EVENT_ENVELOPES,
  EVENT_SOURCE,
  EVENT_TYPES,
  EVENTS,
  EventPage,
  toEventEnvelope,
  type EventType
} from "./events.js"
export { MASKED_PASSWORD, PlanEntryBody, PlanEntryView, toPlanEntryView } from "./operations/plans.js"
export {
  DEFAULT_EVENTS_PAGE,
  decodePreferencesPatch,
  EventsQuery,
  MAX_EVENTS_PAGE,
  PreferencesPatchBody,
  PreferencesView,
  toPatch,
  toPreferencesView
} from "./operations/users.js"
export { PaymentMethodList, PaymentMethodView, SetDefaultBody, toPaymentMethodView } from "./operations/payments.js"
export { HealthView } from "./operations/service.js"

// Webhook signing secrets: the grammar of WEBHOOK_SECRET, which the server and verifyWebhook share (also the entry
// @accord/contract/webhook-secrets)
export {
  MIN_WEBHOOK_KEY_BYTES,
  parseWebhookSecrets,
  WEBHOOK_SECRET_PREFIX,
  WEBHOOK_SECRETS_RULE,
  webhookKeyOf
} from "./webhook-secrets.js"

// Problems: every code with its status and texts; each domain error's answer; the order of checks and what each adds
export {
  isProblemWithCode,
  PROBLEM_CODE_STATUS,
  PROBLEM_CODES,
  PROBLEM_CONTENT_TYPE,
  PROBLEMS,
  ProblemSchema,
  REASON_PHRASES,
  type FixedDetailCode,
  type ProblemCode,
  type ProblemWithCode,
  type StatusOf
} from "./problems.js"
export {
  DOMAIN_ERRORS,
  MAX_LISTED_FIELD_ISSUES,
  problem,
  problemDocument,
  problemOf,
  type AnswerHeader,
  type DomainErrorTag,
  type ErrorAnswer,
  type Problem
} from "./domain-errors.js"
export {
  answerHeadersOf,
  appliesTo,
  errorStatusesOf,
  LATER_ANSWERS_CARRY,
  PIPELINE,
  problemCodesOf,
  readHeadersOf,
  type Applies,
  type Pipeline,
  type PipelineCheck,
  type PipelineCheckId,
  type ProblemCodeOf,
  type ProblemCodeSource,
  type ReadHeader
} from "./checks.js"

// The OpenAPI 3.1 document, and the examples of its problems
export { makeOpenApiDocument } from "./openapi.js"
export { PROBLEM_EXAMPLES, validationProblemExample, type ProblemExample } from "./examples.js"
