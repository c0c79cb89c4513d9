import { makeHttpHandler } from "@accord/core"
import { makeAccordTestKit } from "@accord/testkit"
import { makeMemoryRateLimiter } from "@accord/rate-limit"

// Two requests per credential per 2 s window (capacity 2, refill 1 per second), counted in this process.
const rateLimit = makeMemoryRateLimiter({ capacity: 2, refillPerSecond: 1 })
const kit = await makeAccordTestKit()
const handler = makeHttpHandler({ runtime: kit.runtime, rateLimit })

const list = () =>
  handler({
    method: "GET",
    path: "/api/payments/v1/payment-methods/",
    headers: { authorization: `Bearer ${kit.user.token}` }
  })
const answers = [await list(), await list(), await list()]
console.log(
  answers.map((answer) => answer.status),
  answers[2]?.headers["retry-after"]
)
// [ 200, 200, 429 ] 2

await rateLimit.close()
await kit.dispose()
