import {
  auditTarget,
  httpAudits,
  makeAuditFixture,
  runAudit,
  runAudits,
  type AuditTarget
} from "@accord/conformance/audits"
import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync } from "node:fs"

const BASE = { userToken: "u", otherUserToken: "o", clientToken: "c" }

const NOT_FOUND_PROBLEM =
  '{"type":"about:blank","title":"Not Found","status":404,"detail":"No resource exists at this address.","code":"not_found"}'

/** A seeded target whose server answers every request with the same 404 problem, with or without the common headers. */
const alwaysNotFound = (commonHeaders: boolean): AuditTarget => {
  const seeded = makeAuditFixture().target("http://127.0.0.1:1/api")
  const headers: Record<string, string> = { "content-type": "application/problem+json; charset=utf-8" }
  if (commonHeaders)
    Object.assign(headers, {
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "x-request-id": "fake-id"
    })
  return {
    ...seeded,
    send: () => Promise.resolve({ status: 404, headers, body: Buffer.from(NOT_FOUND_PROBLEM) }),
    exchange: () => Promise.resolve({ wire: `HTTP/1.1 404 Not Found\r\n\r\n${NOT_FOUND_PROBLEM}`, closed: true })
  }
}

describe("the audits", () => {
  it("have unique ids of the form ACC-slug, a level and a title", () => {
    expect(new Set(httpAudits.map((audit) => audit.id)).size).toBe(httpAudits.length)
    for (const audit of httpAudits) {
      expect(audit.id).toMatch(/^ACC-[a-z0-9]+(-[a-z0-9]+)*$/)
      expect(["MUST", "SHOULD"]).toContain(audit.level)
      expect(audit.title.length).toBeGreaterThan(10)
    }
  })

  // Every audit asserts something a server can get wrong: against one that answers a well-formed 404 problem to
  // everything, only the audits that expect nothing but 404 problems, or look at the headers alone, pass; without the
  // common headers, those fail too.
  it("each fails against a server that answers every request with the same 404 problem, with a reason", async () => {
    const results = await runAudits(httpAudits, alwaysNotFound(true))
    expect(results.filter((result) => result.status !== "fail").map((result) => result.id)).toEqual([
      "ACC-routes-unknown-404",
      "ACC-routes-outside-prefix-404",
      "ACC-headers-on-every-response"
    ])
    for (const result of results.filter((result) => result.status === "fail")) expect(result.reason).toMatch(/\S/)
    const bare = await runAudits(httpAudits, alwaysNotFound(false))
    expect(bare.filter((result) => result.status !== "fail").map((result) => result.id)).toEqual([])
  })

  it("skip, with the reason, when the target lacks what they need", async () => {
    const target = auditTarget({ ...BASE, url: "http://127.0.0.1:1/api" })
    const seeded = httpAudits.filter((audit) => audit.needs.includes("seeded"))
    // Which audits need a seeded store is each audit's own declaration (`needs`); a new one joins without an edit here.
    expect(seeded.length).toBeGreaterThan(0)
    for (const audit of seeded) {
      const result = await runAudit(audit, target)
      expect(result.status).toBe("skip")
      expect(result.reason).toMatch(/needs a store the runner seeded itself/)
    }
  })

  it("skip the wire audits where there are no raw sockets", async () => {
    const target = auditTarget({
      ...BASE,
      url: "http://127.0.0.1:1/api",
      exchange: false,
      corsOrigin: "https://app.example"
    })
    const wire = httpAudits.filter((audit) => audit.needs.includes("wire"))
    expect(wire.map((audit) => audit.id)).toEqual([
      "ACC-auth-two-headers-401",
      "ACC-transfer-coding-501",
      "ACC-cors-two-origin-headers"
    ])
    for (const audit of wire) expect((await runAudit(audit, target)).reason).toBe("needs raw socket access (node:net)")
  })

  it("skip the raw HTTP/1.1 audits, and the wire audits, on a target built on a fetch", async () => {
    const target = auditTarget({
      ...BASE,
      url: "http://127.0.0.1:1/api",
      fetch: () => Promise.reject(new Error("no network here")),
      corsOrigin: "https://app.example"
    })
    expect([target.rawHttp, target.exchange]).toEqual([false, undefined])
    const raw = httpAudits.filter((audit) => audit.needs.includes("raw-http"))
    expect(raw.map((audit) => audit.id)).toEqual([
      "ACC-docs-content-encoding",
      "ACC-order-credentials-before-body",
      "ACC-media-type-415",
      "ACC-size-declared-length",
      "ACC-size-chunked",
      "ACC-body-ignored-on-get-head-options",
      "ACC-head-headers-like-get",
      "ACC-payment-methods-set-default-repeat",
      "ACC-events-stream-replay-live",
      "ACC-events-stream-heartbeat",
      "ACC-events-stream-refusals",
      "ACC-events-stream-limit"
    ])
    for (const audit of raw) expect((await runAudit(audit, target)).reason).toMatch(/^needs HTTP\/1\.1 framing/)
    for (const audit of httpAudits.filter((audit) => audit.needs.includes("wire")))
      expect((await runAudit(audit, target)).reason).toMatch(/needs raw socket access/)
    // A send of the runner's own (HTTP/2, say) honours every field of RawRequest: the raw audits run on it.
    expect(
      auditTarget({ ...BASE, url: "http://x/api", send: target.send, fetch: () => Promise.reject() }).rawHttp
    ).toBe(true)
  })

  it("skip the CORS audits when the target names no origin the server allows", async () => {
    const target = auditTarget({ ...BASE, url: "http://127.0.0.1:1/api" })
    const cors = httpAudits.filter((audit) => audit.needs.includes("cors"))
    expect(cors.map((audit) => audit.id)).toEqual([
      "ACC-cors-vary-origin",
      "ACC-cors-origin-not-one-origin",
      "ACC-cors-two-origin-headers",
      "ACC-deprecation-cors-exposed"
    ])
    for (const audit of cors)
      expect((await runAudit(audit, target)).reason).toBe("needs an origin the server's CORS allows (--cors-origin)")
  })

  it("refuse a target they cannot audit", () => {
    const base = BASE
    expect(() => auditTarget({ ...base, url: "ftp://example.com/api" })).toThrow(/http: or https:/)
    expect(() => auditTarget({ ...base, url: "http://x/api", userPaymentMethods: ["pm_1"] })).toThrow(/two/)
    expect(auditTarget({ ...base, url: "http://x:3000/v2/accord/" }).paths.health).toBe("/v2/accord/health")
  })

  it("load nothing at run time but Node's modules, the contract they audit and its effect (accord-conformance needs no test framework)", () => {
    const allowed = (specifier: string) =>
      specifier.startsWith(".") || specifier.startsWith("node:") || ["@accord/contract", "effect"].includes(specifier)
    const dir = new URL("../src/", import.meta.url)
    const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((name) => name.endsWith(".ts"))
    expect(files).toContain("audits/per-operation.ts")
    for (const file of files) {
      const source = readFileSync(new URL(file, dir), "utf8")
      for (const [statement, specifier = ""] of source.matchAll(/^import (?!type )[^"]*"([^"]+)"/gm)) {
        expect(allowed(specifier), `${file}: ${statement}`).toBe(true)
      }
    }
  })
})
