import { allowOnPathOf, httpAudits, operationAt, operationAudits, paths, type Audit } from "@accord/conformance"
import { operations, type OperationId } from "@accord/contract"
import { describe, expect, it } from "@effect/vitest"

// issue 28: a new operation of the contract is audited without a hand edit (the pipeline's rules, operationAudits),
// and a test says so when what it does has no audit of its own yet.

const OPERATION_IDS: ReadonlyArray<OperationId> = Object.values(operations).map((operation) => operation.operationId)

/** The operations no audit among `audits` names in its `operations`. */
const unaudited = (audits: ReadonlyArray<Audit>): ReadonlyArray<OperationId> =>
  OPERATION_IDS.filter((id) => !audits.some((audit) => audit.operations.includes(id)))

/** The audits written for what operations do: every audit but the pipeline's rules derived from the contract. */
const behaviourAudits = httpAudits.filter((audit) => !operationAudits.includes(audit))

describe("audit coverage of the contract's operations", () => {
  it("every operation has a behaviour audit of its own (Audit.operations)", () => {
    expect(unaudited(behaviourAudits)).toEqual([])
    // The check can fail: without the audits that name createPublicPlanEntry, it names it.
    const withoutPlans = behaviourAudits.filter((audit) => !audit.operations.includes("createPublicPlanEntry"))
    expect(unaudited(withoutPlans)).toEqual(["createPublicPlanEntry"])
  })

  it("every operation gets the pipeline's rules, derived from the contract, with ids from its operationId", () => {
    expect(unaudited(operationAudits)).toEqual([])
    for (const audit of operationAudits) {
      expect(audit.operations.length).toBe(1)
      const slug = (audit.operations[0] ?? "").replace(/[A-Z]/g, (upper) => `-${upper.toLowerCase()}`)
      expect(audit.id.startsWith(`ACC-${slug}-`), audit.id).toBe(true)
    }
    // Every operation: 405 with Allow and OPTIONS; each credentialed one: 401; each that reads a body: its refusals.
    for (const operation of Object.values(operations)) {
      const rules = operationAudits
        .filter((audit) => audit.operations.includes(operation.operationId))
        .map((audit) => audit.id)
      expect(rules.some((rule) => rule.endsWith("-405-allow"))).toBe(true)
      expect(rules.some((rule) => rule.endsWith("-options-204"))).toBe(true)
      expect(rules.some((rule) => rule.endsWith("-credential-401"))).toBe(operation.access !== "public")
      expect(rules.some((rule) => rule.endsWith("-body-refusals"))).toBe(operation.body !== undefined)
    }
  })

  it("every audit names only operations of the contract", () => {
    for (const audit of httpAudits) for (const id of audit.operations) expect(OPERATION_IDS).toContain(id)
  })
})

describe("paths from the contract", () => {
  it("names each operation's path under the prefix, its parameters as given", () => {
    expect(paths.of("setDefaultPaymentMethod", { id: "pm%201" })).toBe("/api/payments/v1/payment-methods/pm%201/")
    expect(paths.paymentMethod("pm_1")).toBe(paths.of("setDefaultPaymentMethod", { id: "pm_1" }))
    expect(paths.preferences).toBe("/api/users/v1/preferences/language/")
    expect([paths.health, paths.live, paths.ready]).toEqual(["/api/health", "/api/health/live", "/api/health/ready"])
  })

  it("finds the operation a request names, by method and path, with or without the trailing slash", () => {
    expect(operationAt("/api", "PUT", "/api/payments/v1/payment-methods/pm_1")).toBe("setDefaultPaymentMethod")
    expect(operationAt("/api", "HEAD", "/api/users/v1/preferences/language/")).toBe("getLanguagePreferences")
    expect(operationAt("/api", "GET", "/api/health?x=1")).toBe("health")
    expect(operationAt("/api", "GET", "/api/health/")).toBeUndefined()
    // A method the path does not serve (the route table's, whatever operations it has).
    const unserved = ["DELETE", "PATCH", "POST", "GET"].find(
      (method) => !allowOnPathOf("setDefaultPaymentMethod").split(", ").includes(method)
    )
    expect(operationAt("/api", unserved ?? "", "/api/payments/v1/payment-methods/pm_1/")).toBeUndefined()
    expect(operationAt("/api", "GET", "/api/openapi.json")).toBeUndefined()
    expect(operationAt("/v2", "GET", "/api/health")).toBeUndefined()
  })
})
