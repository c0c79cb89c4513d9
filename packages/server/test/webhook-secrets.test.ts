import { randomBytes } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { Redacted } from "effect"
import { verifyWebhook, WebhookVerificationError } from "@accord/client/webhooks"
import { signWebhook } from "../src/events.js"
import { ConfigError, parseConfig } from "../src/index.js"

// Issue 35, item 8: the server and verifyWebhook read a secret by one grammar (@accord/contract/webhook-secrets). Every
// WEBHOOK_SECRET the server takes, verifyWebhook takes as it is (as the README's receiver passes it) and verifies what
// the server signed with it; every one the server refuses (exit 2), verifyWebhook refuses too (reason `secret`).

const WEBHOOK_URL = "http://127.0.0.1:1/hooks"
const BODY = JSON.stringify({ specversion: "1.0", id: "019a4f6e-3c2b-7d40-9a1e-5f6b7c8d9e0f", type: "x", data: {} })

/** The keys the server signs with for this WEBHOOK_SECRET, or undefined when its start refuses it (exit 2). */
const serverKeys = (secret: string): ReadonlyArray<Uint8Array> | undefined => {
  try {
    const parsed = parseConfig(["--webhook-url", WEBHOOK_URL], { WEBHOOK_SECRET: secret })
    if (parsed._tag !== "Run" || parsed.config.webhookSecret === undefined) throw new Error("no secret in the config")
    return Redacted.value(parsed.config.webhookSecret)
  } catch (error) {
    if (error instanceof ConfigError && error.exitCode === 2 && /WEBHOOK_SECRET/.test(error.message)) {
      // Refused without echoing it.
      const shown = secret.trim()
      if (shown.length >= 8) expect(error.message).not.toContain(shown)
      return undefined
    }
    throw error
  }
}

/** A delivery as the server sends it: signed with `keys` now. */
const delivery = (keys: ReadonlyArray<Uint8Array>) => {
  const timestamp = Math.floor(Date.now() / 1000)
  return {
    "webhook-id": "msg_1",
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signWebhook(keys, "msg_1", timestamp, BODY)
  }
}

/** What verifyWebhook makes of `secret` (the README receiver's call: the variable as it is). */
const clientVerdict = async (secret: string, keys: ReadonlyArray<Uint8Array>): Promise<"verified" | string> => {
  try {
    await verifyWebhook(secret, delivery(keys), BODY)
    return "verified"
  } catch (error) {
    if (error instanceof WebhookVerificationError) return error.reason
    throw error
  }
}

/** Both sides on one text: the server takes it and verifyWebhook verifies its deliveries, or both refuse it. */
const expectOneGrammar = async (secret: string) => {
  const keys = serverKeys(secret)
  if (keys === undefined) {
    // Signed with some key: verifyWebhook must refuse the secret itself, not the signature.
    expect(await clientVerdict(secret, [randomBytes(32)]), JSON.stringify(secret)).toBe("secret")
  } else {
    expect(keys.length).toBeGreaterThan(0)
    expect(await clientVerdict(secret, keys), JSON.stringify(secret)).toBe("verified")
    // Each key alone signs a delivery it verifies (a rotation: any one of them may have signed).
    for (const key of keys) expect(await clientVerdict(secret, [key]), JSON.stringify(secret)).toBe("verified")
  }
}

const base64 = (bytes: number) => randomBytes(bytes).toString("base64")

describe("WEBHOOK_SECRET: one grammar for the server and verifyWebhook", () => {
  // The texts of the issue and their neighbours, each with the verdict both sides give.
  const matrix: ReadonlyArray<readonly [string, string, boolean]> = [
    ["one secret, 24 bytes", `whsec_${base64(24)}`, true],
    ["16 bytes, the fewest", `whsec_${base64(16)}`, true],
    ["15 bytes", `whsec_${base64(15)}`, false],
    ["without its padding", `whsec_${base64(16).replace(/=+$/, "")}`, true],
    ["25 characters of base64 (one left over: no byte)", `whsec_${base64(24).slice(0, 25)}`, false],
    ["padding short of a whole group", `whsec_${base64(16).replace(/=+$/, "")}=`, false],
    ["three =", `whsec_${base64(16).replace(/=+$/, "")}===`, false],
    [
      "two separated by two spaces, a line break after (the README's split broke here)",
      `whsec_${base64(24)}  whsec_${base64(32)}\n`,
      true
    ],
    ["separated by a tab", `whsec_${base64(24)}\twhsec_${base64(24)}`, true],
    ["separated by CRLF, as from a Windows file", `whsec_${base64(24)}\r\nwhsec_${base64(24)}\r\n`, true],
    ["spaces around", `  whsec_${base64(24)}  `, true],
    ["separated by a no-break space", `whsec_${base64(24)}\u00a0whsec_${base64(24)}`, false],
    ["separated by a comma", `whsec_${base64(24)},whsec_${base64(24)}`, false],
    ["no prefix", base64(24), false],
    ["prefix in upper case", `WHSEC_${base64(24)}`, false],
    ["base64url", `whsec_${randomBytes(24).toString("base64url")}-_`, false],
    ["one good, one not", `whsec_${base64(24)} whsec_${base64(8)}`, false],
    ["empty", "", false],
    ["spaces only", " \n ", false]
  ]

  it.each(matrix)("%s: taken by both, or refused by both", async (_, secret, taken) => {
    expect(serverKeys(secret) !== undefined).toBe(taken)
    await expectOneGrammar(secret)
  })

  it("any text made of secrets' parts: what one side takes, the other takes too", async () => {
    const SEPARATORS = [" ", "  ", "\t", "\n", "\r\n", " \n", "\r", "\f", "\v", "\u00a0", "\u2028", ",", ""]
    const secret = fc
      .record({
        prefix: fc.constantFrom("whsec_", "whsec_", "whsec_", "WHSEC_", "whsec", ""),
        bytes: fc.uint8Array({ minLength: 0, maxLength: 40 }),
        // How the base64 is written: as is, without padding, cut or grown by a character, one character swapped.
        shape: fc.constantFrom("as-is", "unpadded", "cut", "grown", "extra=", "swapped"),
        odd: fc.constantFrom("-", "_", ".", " ", "é", "=", "A")
      })
      .map(({ prefix, bytes, shape, odd }) => {
        const text = Buffer.from(bytes).toString("base64")
        const body =
          shape === "unpadded"
            ? text.replace(/=+$/, "")
            : shape === "cut"
              ? text.slice(0, -1)
              : shape === "grown"
                ? `${text}A`
                : shape === "extra="
                  ? `${text}=`
                  : shape === "swapped" && text.length > 0
                    ? `${text.slice(0, text.length >> 1)}${odd}${text.slice((text.length >> 1) + 1)}`
                    : text
        return `${prefix}${body}`
      })
    const text = fc
      .tuple(
        fc.constantFrom(...SEPARATORS),
        fc.array(fc.tuple(secret, fc.constantFrom(...SEPARATORS)), { minLength: 1, maxLength: 3 })
      )
      .map(([leading, parts]) => leading + parts.map(([one, separator]) => one + separator).join(""))
    await fc.assert(fc.asyncProperty(text, expectOneGrammar), { numRuns: 400 })
  })
})
