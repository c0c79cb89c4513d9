import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { MIN_WEBHOOK_KEY_BYTES, parseWebhookSecrets, webhookKeyOf } from "@accord/contract/webhook-secrets"

// The grammar of WEBHOOK_SECRET (the server's and verifyWebhook's: packages/server/test/webhook-secrets.test.ts runs
// both sides on the same texts); here, that a secret decodes to exactly its key.

const key = fc.uint8Array({ minLength: MIN_WEBHOOK_KEY_BYTES, maxLength: 64 })
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

describe("webhook secrets", () => {
  it("whsec_ and the base64 of a key of 16 bytes or more, with its padding or without, is that key", () => {
    fc.assert(
      fc.property(key, fc.boolean(), (bytes, padded) => {
        const text = padded ? base64(bytes) : base64(bytes).replace(/=+$/, "")
        expect(webhookKeyOf(`whsec_${text}`)).toEqual(new Uint8Array(bytes))
      })
    )
  })

  it("several, separated by spaces, tabs or line breaks, with any of those around them, are their keys in order", () => {
    fc.assert(
      fc.property(
        fc.array(key, { minLength: 1, maxLength: 4 }),
        fc.constantFrom(" ", "  ", "\t", "\n", "\r\n", " \t\n"),
        (keys, separator) => {
          const text = `${separator}${keys.map((bytes) => `whsec_${base64(bytes)}`).join(separator)}${separator}`
          expect(parseWebhookSecrets(text)).toEqual(keys.map((bytes) => new Uint8Array(bytes)))
        }
      )
    )
  })

  it("refuses a key shorter than 16 bytes, a text that is no base64, and no secret at all", () => {
    for (const text of [
      `whsec_${base64(new Uint8Array(MIN_WEBHOOK_KEY_BYTES - 1))}`,
      `whsec_${base64(new Uint8Array(24)).slice(0, 25)}`,
      `whsec_${base64(new Uint8Array(16)).replace(/=+$/, "")}=`,
      `whsec_${base64(new Uint8Array(24))}=`,
      `whsec_${Buffer.from(new Uint8Array(24).fill(251)).toString("base64url")}`,
      `WHSEC_${base64(new Uint8Array(24))}`,
      base64(new Uint8Array(24)),
      "",
      " \n "
    ])
      expect(parseWebhookSecrets(text), JSON.stringify(text)).toBeUndefined()
  })

  it("reads separators of any length around a secret", () => {
    const secret = `whsec_${base64(new Uint8Array(24))}`
    expect(parseWebhookSecrets(`${" ".repeat(200_000)}x${" ".repeat(200_000)}`)).toBeUndefined()
    expect(parseWebhookSecrets(`${" ".repeat(200_000)}${secret}${"\t".repeat(200_000)}`)).toHaveLength(1)
  })
})
