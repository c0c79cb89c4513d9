// @accord/domain/values: the domain's values and how input becomes them, without records, ports or use cases: what
// a wire contract (@accord/contract) builds its bodies and views from, and what a client may carry.

export { FIELD_ISSUE_CODE, FIELD_ISSUE_CODES, issue, type FieldIssue, type FieldIssueCode } from "./field-issue.js"
export { describedAs } from "./json-schema.js"
export { Email, emailKey, trimAsciiWhitespace } from "./email.js"
export { Password, PasswordHash } from "./password.js"
export { PaymentMethodId } from "./payment-method-id.js"
export { TimezoneOffset } from "./timezone.js"
export { isWellFormedLanguageTag, LanguageTagInput } from "./language.js"
export { ClientId, UserId } from "./ids.js"
export { isWellFormedToken, TOKEN_PATTERN } from "./token.js"
export { boundedMemo } from "./bounded-memo.js"
export { decoderFor, resultDecoderFor, toValidationError } from "../decode.js"
export { ValidationError } from "../errors.js"
