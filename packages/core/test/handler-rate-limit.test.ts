import { type HttpRequest, makeHttpHandler, type RateLimiter, type RateLimitQuota } from "@accord/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { runtimeWithPorts, tokenTableAuthenticator } from "@accord/test-support"

/** What the use cases were asked, so a test can tell that a refused request never reached them. */
const listed: Array<string> = []
const runtime = runtimeWithPorts({
  authenticator: tokenTableAuthenticator(),
  paymentMethods: { listByUser: (userId) => Effect.sync(() => (listed.push(userId), [])) },
  storeAdmin: { ping: Effect.void }
})

/** A limiter answering `wait` seconds to every call, recording the keys it was asked about. */
const recordingLimiter = (wait: number) => {
  const keys: Array<string> = []
  const limiter: RateLimiter = { consume: (key) => (keys.push(key), Promise.resolve(wait)) }
  return { keys, limiter }
}

const paymentMethods = (token?: string): HttpRequest => ({
  method: "GET",
  path: "/api/payments/v1/payment-methods/",
  headers: token === undefined ? {} : { authorization: `Bearer ${token}` }
})

describe("the handler's rate limit (HttpHandlerOptions.rateLimit)", () => {
  it("asks the limiter with the principal's key and goes on when it answers 0", async () => {
    const { keys, limiter } = recordingLimiter(0)
    const handler = makeHttpHandler({ runtime, rateLimit: limiter })
    listed.length = 0
    expect((await handler(paymentMethods("user-token"))).status).toBe(200)
    expect(keys).toEqual(["user:u_1"])
    expect(listed).toEqual(["u_1"])
  })

  it("answers 429 rate_limited with the limiter's seconds as Retry-After, before the use case runs", async () => {
    const { limiter } = recordingLimiter(7)
    const handler = makeHttpHandler({ runtime, rateLimit: limiter })
    listed.length = 0
    const response = await handler(paymentMethods("user-token"))
    expect(response.status).toBe(429)
    expect(response.headers["retry-after"]).toBe("7")
    expect(response.headers["content-type"]).toBe("application/problem+json; charset=utf-8")
    expect(JSON.parse(String(response.body))).toEqual({
      type: "about:blank",
      title: "Too Many Requests",
      status: 429,
      detail: "Too many requests with this credential; retry later.",
      code: "rate_limited"
    })
    expect(listed).toEqual([])
  })

  it("keeps the order of checks: 401 before the limiter, 429 before 403, 429 before the body is read", async () => {
    const refusing = recordingLimiter(1)
    const handler = makeHttpHandler({ runtime, rateLimit: refusing.limiter })
    expect((await handler(paymentMethods())).status).toBe(401)
    expect((await handler(paymentMethods("unknown-token"))).status).toBe(401)
    expect((await handler({ method: "GET", path: "/api/health", headers: {} })).status).toBe(200)
    expect(refusing.keys).toEqual([])

    // An application credential on a user operation: 429 while limited, 403 once allowed.
    expect((await handler(paymentMethods("client-token"))).status).toBe(429)
    expect(refusing.keys).toEqual(["client:web"])
    const allowing = recordingLimiter(0)
    expect(
      (await makeHttpHandler({ runtime, rateLimit: allowing.limiter })(paymentMethods("client-token"))).status
    ).toBe(403)

    let bodyRead = false
    const tooLarge = await handler({
      method: "PUT",
      path: "/api/users/v1/preferences/language/",
      headers: { authorization: "Bearer user-token", "content-type": "application/json", "content-length": "99999" },
      readBody: () => {
        bodyRead = true
        return Promise.resolve({ _tag: "TooLarge" })
      }
    })
    expect(tooLarge.status).toBe(429)
    expect(bodyRead).toBe(false)
  })

  it("states the policy's quota, or the answer's own (a process limiting by itself while its store fails)", async () => {
    const answers: Array<RateLimitQuota> = [
      { waitSeconds: 0, remaining: 4, resetSeconds: 9 },
      { waitSeconds: 0, remaining: 1, resetSeconds: 8, policyQuota: 2 },
      { waitSeconds: 8, remaining: 0, resetSeconds: 8, policyQuota: 2 }
    ]
    const limiter: RateLimiter = {
      consume: () => Promise.resolve(0),
      consumeQuota: () => Promise.resolve(answers.shift() ?? 0),
      policy: { quota: 5, windowSeconds: 10 }
    }
    const handler = makeHttpHandler({ runtime, rateLimit: limiter })
    const responses = [
      await handler(paymentMethods("user-token")),
      await handler(paymentMethods("user-token")),
      await handler(paymentMethods("user-token"))
    ]
    expect(
      responses.map((response) => [
        response.status,
        response.headers["ratelimit-policy"],
        response.headers["ratelimit"],
        response.headers["retry-after"]
      ])
    ).toEqual([
      [200, '"default";q=5;w=10', '"default";r=4;t=9', undefined],
      [200, '"default";q=2;w=10', '"default";r=1;t=8', undefined],
      [429, '"default";q=2;w=10', '"default";r=0;t=8', "8"]
    ])
  })

  it("has no limit without a limiter", async () => {
    const handler = makeHttpHandler({ runtime })
    const statuses = await Promise.all(Array.from({ length: 20 }, () => handler(paymentMethods("user-token"))))
    expect(new Set(statuses.map((response) => response.status))).toEqual(new Set([200]))
  })
})
