import { randomBytes } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Webhook } from "standardwebhooks"
import { OPERATION_DOCS } from "@accord/contract"
import { verifyWebhook, WebhookVerificationError } from "@accord/client/webhooks"

// verifyWebhook against an independent implementation of Standard Webhooks (the `standardwebhooks` package): what it
// signs is accepted, what it would refuse is refused (the server's signer is checked against it in the server's tests).

const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`
// The feed's example event (the contract's docs): what a webhook carries.
const [EVENT] = OPERATION_DOCS.listEvents.successExample.data
if (EVENT === undefined) throw new Error("the feed's example has no event")
const BODY = JSON.stringify(EVENT)

/** The headers `standardwebhooks` makes for `body` under `secret`, at `at`. */
const signed = (secret: string, body = BODY, at = new Date()) => ({
  "webhook-id": EVENT.id,
  "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
  "webhook-signature": new Webhook(secret).sign(EVENT.id, at, body)
})

const refusal = async (promise: Promise<unknown>) => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught
  )
  expect(error).toBeInstanceOf(WebhookVerificationError)
  return (error as WebhookVerificationError).reason
}

describe("verifyWebhook", () => {
  it("accepts what standardwebhooks signs, from Node's headers or fetch's, as text or bytes, and returns the event", async () => {
    const secret = newSecret()
    const headers = signed(secret)
    const event = await verifyWebhook(secret, headers, BODY)
    expect(event).toEqual(EVENT)
    if (event.type === "payment_method.default_changed") expect(event.data.previous_default_id).toBeNull()
    expect(await verifyWebhook(secret, new Headers(headers), new TextEncoder().encode(BODY))).toEqual(EVENT)
  })

  it("during a rotation: any of several secrets, and any of several signatures", async () => {
    const [old, current] = [newSecret(), newSecret()]
    const headers = signed(current)
    expect(await verifyWebhook([old, current], headers, BODY)).toEqual(EVENT)
    const both = {
      ...headers,
      "webhook-signature": `${signed(old)["webhook-signature"]} ${headers["webhook-signature"]}`
    }
    expect(await verifyWebhook(current, both, BODY)).toEqual(EVENT)
    expect(await verifyWebhook(old, both, BODY)).toEqual(EVENT)
  })

  it("refuses a changed body, another secret, another id, a missing header, an old or a future timestamp", async () => {
    const secret = newSecret()
    const headers = signed(secret)
    expect(await refusal(verifyWebhook(secret, headers, BODY.replace("pm_2", "pm_3")))).toBe("signature")
    expect(await refusal(verifyWebhook(newSecret(), headers, BODY))).toBe("signature")
    expect(await refusal(verifyWebhook(secret, { ...headers, "webhook-id": "other" }, BODY))).toBe("signature")
    expect(await refusal(verifyWebhook(secret, { ...headers, "webhook-signature": "v2,abc" }, BODY))).toBe("signature")
    const { "webhook-timestamp": _, ...withoutTimestamp } = headers
    expect(await refusal(verifyWebhook(secret, withoutTimestamp, BODY))).toBe("headers")
    const now = Date.now()
    for (const offset of [-301_000, 301_000]) {
      const at = new Date(now + offset)
      expect(await refusal(verifyWebhook(secret, signed(secret, BODY, at), BODY))).toBe("timestamp")
      // The tolerance is the caller's to widen.
      expect(await verifyWebhook(secret, signed(secret, BODY, at), BODY, { toleranceSeconds: 400 })).toEqual(EVENT)
    }
    expect(await refusal(verifyWebhook("not-a-secret", headers, BODY))).toBe("secret")
    // standardwebhooks refuses the same changed body: the two agree.
    expect(() => new Webhook(secret).verify(BODY.replace("pm_2", "pm_3"), headers)).toThrow()
  })
})
