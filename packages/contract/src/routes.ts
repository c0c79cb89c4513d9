// @accord/contract/routes: what a client needs to call every operation and check its answers cheaply, as plain data
// and plain code, with nothing of effect at run time (its types still come from the operations' Schemas). The light
// @accord/client reads this entry alone; the Schemas are the main entry's.

export { OPERATION_ROUTES } from "./operation-routes.generated.js"
export type { ErasedOperationRoute, OperationRoute, OperationRoutes } from "./operation-routes.js"
export { isProblemWithCode, type ProblemWithCode } from "./problems.js"
export { readDeprecation, type DeprecationNotice } from "./deprecation.js"
