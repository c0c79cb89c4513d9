import { Schema } from "effect"
import { defineOperation, type DocsOf } from "../operation.js"

// docs/api.md, "Probes".

/** What the health route and the probes answer while all is well: `{"status": "ok"}`. */
export const HealthView = Schema.Struct({ status: Schema.Literal("ok") }).annotate({ identifier: "Health" })
export type HealthView = typeof HealthView.Type

export const serviceOperations = {
  health: defineOperation({
    operationId: "health",
    method: "GET",
    path: "/health",
    exact: true,
    access: "public",
    success: { status: 200, schema: HealthView },
    errors: ["Unavailable"],
    records: "none"
  }),
  liveness: defineOperation({
    operationId: "liveness",
    method: "GET",
    path: "/health/live",
    exact: true,
    access: "public",
    success: { status: 200, schema: HealthView },
    errors: [],
    records: "none"
  }),
  readiness: defineOperation({
    operationId: "readiness",
    method: "GET",
    path: "/health/ready",
    exact: true,
    access: "public",
    success: { status: 200, schema: HealthView },
    errors: ["Unavailable"],
    unavailableWhileDraining: true,
    records: "none"
  })
}

const OK = { status: "ok" } as const

export const serviceDocs: DocsOf<typeof serviceOperations> = {
  health: {
    tag: "service",
    summary: "Liveness of the service and its store",
    description:
      '`{"status": "ok"}` when the service can reach its store, else 503 with `Retry-After`. Needs no credential and ignores one sent; meant for load balancers and orchestrators.',
    successExample: OK
  },
  liveness: {
    tag: "service",
    summary: "Liveness probe: the process serves",
    description:
      '`{"status": "ok"}` whenever the process answers HTTP, also while it drains or while its store is unreachable: it never calls the store, so a database outage never gets healthy processes restarted. Needs no credential and ignores one sent; meant for an orchestrator\'s liveness probe.',
    successExample: OK
  },
  readiness: {
    tag: "service",
    summary: "Readiness probe: the process takes new requests",
    description:
      '`{"status": "ok"}` when the service can reach its store and is not shutting down; 503 with `Retry-After` while it drains (SIGTERM) or while the store is unreachable, so a load balancer sends new requests elsewhere. Needs no credential and ignores one sent; meant for load balancers and an orchestrator\'s readiness probe.',
    successExample: OK
  }
}
