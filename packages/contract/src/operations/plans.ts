import { Email, Password } from "@accord/domain/values"
import { Schema } from "effect"
import { defineOperation, type DocsOf } from "../operation.js"

// docs/api.md, "Create public plan entry (POST)".

/** The sign-up body: `email` and `password`, both required, no other field (docs/api.md, "Precise rules"). */
export const PlanEntryBody = Schema.Struct({ email: Email, password: Password }).annotate({
  identifier: "PlanEntryCreate"
})
export type PlanEntryBody = typeof PlanEntryBody.Type

/** The password is masked in every response: SPEC's shape, none of the secret. */
export const MASKED_PASSWORD = "********"

export const PlanEntryView = Schema.Struct({
  email: Schema.String.annotate({ format: "email" }),
  password: Schema.Literal(MASKED_PASSWORD)
}).annotate({ identifier: "PlanEntry" })
export type PlanEntryView = typeof PlanEntryView.Type

/** The wire form of a plan entry: its address, and the password masked (it is never returned). */
export const toPlanEntryView = (entry: { readonly email: Email }): PlanEntryView => ({
  email: entry.email,
  password: MASKED_PASSWORD
})

export const planOperations = {
  createPublicPlanEntry: defineOperation({
    operationId: "createPublicPlanEntry",
    method: "POST",
    path: "/plans/v1/subscription-plans/public/",
    access: "anyCredential",
    body: { schema: PlanEntryBody, required: true },
    success: { status: 201, schema: PlanEntryView },
    errors: ["Unavailable"],
    // A plan entry is nobody's user data (an application may create one).
    records: { creates: "plan_entries" }
  })
}

export const planDocs: DocsOf<typeof planOperations> = {
  createPublicPlanEntry: {
    tag: "plans",
    summary: "Create a public subscription plan entry",
    description:
      "Records a sign-up: `email` and `password`, both required, no other field. The email is trimmed and stored with its domain lower-cased; the password (8 to 128 characters) is stored only as a salted scrypt hash and is never returned (the response shows `********`). An email that already has an entry gets the same 201 and changes nothing. Any valid credential may call it, a user's or an application's. When the store is unreachable or password hashing is saturated, the answer is 503 with `Retry-After`.",
    requestExample: { email: "ada@example.com", password: "correct horse battery staple" },
    successExample: { email: "ada@example.com", password: "********" },
    validationExample: {
      request: { email: "ada@example", password: "short" },
      errors: [
        { pointer: "/email", code: "invalid_format", detail: "must be a plain email address (local@domain.tld)" },
        { pointer: "/password", code: "too_short", detail: "must be at least 8 characters" }
      ]
    }
  }
}
