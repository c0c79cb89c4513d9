// The public surface of @accord/contract: Accord's API as data (docs/api.md), listed name by name. It depends on
// effect alone; an implementation binds to it (@accord/core), a client derives from it (@accord/client).

// Field values: the wire rules of docs/api.md ("Precise rules"), each failure with its field issue code (the
// annotation FIELD_ISSUE_CODE, which core's decoder reads)
export { FIELD_ISSUE_CODE, FIELD_ISSUE_CODES, type FieldIssue, type FieldIssueCode } from "./fields/field-issue.js"
export { StrictBoolean } from "./fields/boolean.js"
export { Email, trimAsciiWhitespace } from "./fields/email.js"
export { isWellFormedLanguageTag, LanguageTagInput } from "./fields/language.js"
export { Password } from "./fields/password.js"
export { NAMES_RESOURCE, PaymentMethodId } from "./fields/payment-method-id.js"
export { Timestamp } from "./fields/timestamp.js"
export { TimezoneOffset } from "./fields/timezone.js"
export { WireInt } from "./fields/wire-int.js"

// Bodies and views: what each operation reads and answers, in wire form (snake_case)
export { MASKED_PASSWORD, PlanEntryBody, PlanEntryView } from "./plan-entry.js"
export { PreferencesPatchBody, PreferencesView } from "./preferences.js"
export { PaymentMethodList, PaymentMethodView, SetDefaultBody } from "./payment-method.js"
export { HealthView } from "./health.js"

// Operations: routes, methods, access, Schemas, declared errors
export {
  defineOperation,
  type Access,
  type BodyOf,
  type BodySpec,
  type HttpMethod,
  type Operation,
  type OperationSpec,
  type ParamsOf,
  type Route,
  type SuccessSpec,
  type TypedOperation
} from "./operation.js"
export { operations, type OperationId, type Operations } from "./operations.js"
export { OPERATION_DOCS, type OperationDocs, type OperationTag } from "./operation-docs.js"
export { apiRoutes } from "./routes.js"

// Errors: problem codes, their statuses, and the codes each operation can be answered with
export {
  PROBLEM_CODE_STATUS,
  PROBLEM_CODES,
  PROBLEM_CONTENT_TYPE,
  ProblemSchema,
  REASON_PHRASES,
  type ProblemCode
} from "./problem.js"
export { PROBLEM_DETAILS } from "./problem-details.js"
export {
  DOMAIN_ERROR_CODES,
  DOMAIN_ERROR_STATUS,
  errorStatusesOf,
  problemCodesOf,
  type DomainErrorTag,
  type ProblemCodeOf,
  type ProblemCodeSource
} from "./errors.js"

// The OpenAPI 3.1 document, and the examples of its responses
export { makeOpenApiDocument } from "./openapi.js"
export {
  PROBLEM_EXAMPLES,
  SUCCESS_EXAMPLES,
  VALIDATION_EXAMPLES,
  VALIDATION_REQUESTS,
  type BodyOperationId,
  type ProblemExample
} from "./examples.js"
