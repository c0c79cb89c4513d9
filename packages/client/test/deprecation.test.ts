import { makeAccordClient, type DeprecationNoticeOf, type FetchLike } from "@accord/client"
import { aliasRoutes, OPERATION_ROUTES } from "@accord/contract"
import { describe, expect, it } from "@effect/vitest"

// docs/api.md, "Versioning": the client calls each operation's own path, never a deprecated alias, and tells
// `onDeprecation` what a server announces on an operation it does call.

const BASE = "http://accord.test/api"

describe("the client and deprecation", () => {
  it("calls each operation's own path: no alias is a path the client calls", async () => {
    const called: Array<string> = []
    const fetch: FetchLike = (request) => {
      called.push(new URL(request.url).pathname)
      return Promise.resolve(new Response("{}", { status: 200, headers: { "content-type": "application/json" } }))
    }
    await makeAccordClient({ baseUrl: BASE, token: "tok", fetch }).setDefaultPaymentMethod({ params: { id: "pm_1" } })
    expect(called).toEqual(["/api/payments/v1/payment-methods/pm_1/"])
    const paths: ReadonlySet<string> = new Set(Object.values(OPERATION_ROUTES).map((route) => route.path))
    expect(aliasRoutes.length).toBeGreaterThan(0)
    for (const alias of aliasRoutes) expect(paths.has(alias.path)).toBe(false)
  })

  it("tells onDeprecation the operation, the dates and the successor a server sends; the answer is as usual", async () => {
    const notices: Array<DeprecationNoticeOf> = []
    const fetch: FetchLike = () =>
      Promise.resolve(
        new Response('{"status":"ok"}', {
          status: 200,
          headers: {
            "content-type": "application/json; charset=utf-8",
            deprecation: "@1796083200",
            sunset: "Tue, 01 Jun 2027 00:00:00 GMT",
            link: '</api/health/v2>; rel="successor-version", </api/docs>; rel="deprecation"'
          }
        })
      )
    const client = makeAccordClient({ baseUrl: BASE, fetch, onDeprecation: (notice) => notices.push(notice) })
    const result = await client.health()
    expect(result.ok).toBe(true)
    expect(notices).toEqual([
      {
        operationId: "health",
        deprecatedAt: new Date("2026-12-01T00:00:00Z"),
        sunsetAt: new Date("2027-06-01T00:00:00Z"),
        successor: "/api/health/v2",
        docs: "/api/docs"
      }
    ])
  })

  it("tells nothing for an answer without Deprecation", async () => {
    const notices: Array<DeprecationNoticeOf> = []
    const fetch: FetchLike = () =>
      Promise.resolve(
        new Response('{"status":"ok"}', { status: 200, headers: { "content-type": "application/json; charset=utf-8" } })
      )
    await makeAccordClient({ baseUrl: BASE, fetch, onDeprecation: (notice) => notices.push(notice) }).health()
    expect(notices).toEqual([])
  })
})
