import { Schema } from "effect"

/** What the health route and the probes answer while all is well: `{"status": "ok"}`. */
export const HealthView = Schema.Struct({ status: Schema.Literal("ok") }).annotate({ identifier: "Health" })
export type HealthView = typeof HealthView.Type
