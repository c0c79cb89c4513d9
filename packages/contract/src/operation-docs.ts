import type { DocsOf } from "./operation.js"
import type { Operations } from "./operations.js"
import { paymentDocs } from "./operations/payments.js"
import { planDocs } from "./operations/plans.js"
import { serviceDocs } from "./operations/service.js"
import { userDocs } from "./operations/users.js"

/**
 * The text and examples of each operation, by operationId, gathered from their areas: read by the OpenAPI generator
 * only, in a module of its own, so that a client's bundler leaves it out. Every operation has its entry, or this does
 * not compile.
 */
export const OPERATION_DOCS: DocsOf<Operations> = { ...planDocs, ...userDocs, ...paymentDocs, ...serviceDocs }
