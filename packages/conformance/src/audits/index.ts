import type { Audit } from "./audit.js"
import { authenticationAudits } from "./authentication.js"
import { bodyAudits } from "./bodies.js"
import { conditionalAudits } from "./conditional.js"
import { corsAudits } from "./cors.js"
import { deprecationAudits } from "./deprecation.js"
import { eventStreamAudits } from "./event-stream.js"
import { eventAudits } from "./events.js"
import { headerAudits } from "./headers.js"
import { orderAudits } from "./order.js"
import { paymentMethodAudits } from "./payment-methods.js"
import { operationAudits } from "./per-operation.js"
import { planEntryAudits } from "./plan-entries.js"
import { preferenceAudits } from "./preferences.js"
import { routeAudits } from "./routes.js"
import { serviceAudits } from "./service.js"

/**
 * Every black-box check of the HTTP contract (docs/api.md), in the order a runner runs them: the rules written for
 * what each operation does, then the pipeline's rules on every operation of the contract (`operationAudits`, derived
 * from it). Each is a value with a stable id, a level and a title; `runAudits` runs them against an `auditTarget`,
 * `accord-conformance` from the command line, @accord/test-support's `runHttpConformance` as a vitest suite. They
 * share the target's users and leave them in a valid state.
 */
export const httpAudits: ReadonlyArray<Audit> = [
  ...serviceAudits,
  ...authenticationAudits,
  ...orderAudits,
  ...planEntryAudits,
  ...preferenceAudits,
  ...bodyAudits,
  ...routeAudits,
  ...headerAudits,
  ...paymentMethodAudits,
  ...eventAudits,
  ...eventStreamAudits,
  ...conditionalAudits,
  ...corsAudits,
  ...deprecationAudits,
  ...operationAudits
]

export { operationAudits }

export { AuditFailure, AuditSkipped } from "./assert.js"
export { auditTable, README_AUDITS_BEGIN, README_AUDITS_END } from "./table.js"
export {
  auditTarget,
  DEFAULT_AUDIT_TIMEOUT_MS,
  runAudit,
  runAudits,
  SEED_JSON_OTHER_USER_PAYMENT_METHODS,
  SEED_JSON_USER_PAYMENT_METHODS,
  unmetNeeds,
  type Audit,
  type AuditLevel,
  type AuditNeed,
  type AuditResult,
  type AuditStatus,
  type AuditTarget,
  type AuditTargetOptions,
  type RunLimits,
  type SeededFacts
} from "./audit.js"
export { makeAuditFixture, type AuditFixture } from "./fixture.js"
export { UNSENT_BODY_TIMEOUT_MS } from "./responses.js"
export {
  eventStreamAudits,
  nextEvent,
  openEventStream,
  parseSseBlock,
  type OpenStream,
  type SseBlock
} from "./event-stream.js"
