import { makeFetchHandler } from "@accord/adapter-fetch"
import { loadApiReference } from "@accord/api-reference"
import { httpAudits, makeAuditFixture, runAudits, unmetNeeds, type AuditResult } from "@accord/conformance"
import { Seed, StoreAdmin } from "@accord/domain"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node"
import { MemoryStoreLive } from "@accord/store-memory"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"

// The audits through an injected fetch: @accord/adapter-fetch's handler called in process, with no server and no
// socket. What a fetch cannot express (raw HTTP/1.1 framing, raw bytes on a socket) is skipped with its reason; the
// rest passes.

const fixture = makeAuditFixture()
const runtime = ManagedRuntime.make(Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive(testScryptCost)))
const handler = makeFetchHandler({ runtime, prefix: "/api", docs: loadApiReference(), corsOrigins: "*" })
const calls: Array<string> = []
const target = fixture.target("http://accord.test/api", {
  fetch: (request) => {
    calls.push(`${request.method} ${new URL(request.url).pathname}`)
    return handler(request)
  }
})

beforeAll(async () => {
  const seed = Schema.decodeUnknownSync(Seed)(fixture.seed)
  await runtime.runPromise(Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(seed)))
})
afterAll(() => runtime.dispose())

describe("the audits against a fetch handler in process (auditTarget's fetch)", () => {
  let results: ReadonlyArray<AuditResult> = []

  it("every audit passes, or is skipped with the reason a fetch gives", async () => {
    results = await runAudits(httpAudits, target)
    const failed = results.filter((result) => result.status === "fail")
    expect(failed.map((result) => `${result.id}: ${result.reason}`)).toEqual([])
    const skipped = results.filter((result) => result.status === "skip")
    expect(skipped.map((result) => result.id)).toEqual(
      httpAudits.filter((audit) => audit.needs.some((need) => need === "wire" || need === "raw-http")).map((a) => a.id)
    )
    for (const result of skipped) expect(result.reason).toMatch(/^needs (raw socket access|HTTP\/1\.1 framing)/)
    expect(results.filter((result) => result.status === "pass").length).toBeGreaterThan(80)
  }, 120_000)

  it("sent every request through the fetch: no socket was opened", () => {
    expect(calls.length).toBeGreaterThan(500)
    expect(calls).toContain("PUT /api/payments/v1/payment-methods/a.b/")
    expect(target.exchange).toBeUndefined()
    const chunked = httpAudits.find((audit) => audit.id === "ACC-size-chunked")
    expect(chunked && unmetNeeds(chunked, target)).toMatch(/chunk boundaries/)
  })
})
