import { randomBytes } from "node:crypto"
import { readFileSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { afterAll, describe, expect, it, vi } from "@effect/vitest"
import { Webhook } from "standardwebhooks"
import { OPERATION_DOCS } from "@accord/contract"

// The root README's webhook receiver ("Events and webhooks"), run: what standardwebhooks signs it takes (204) and
// prints, anything else it refuses (400).

const secret = `whsec_${randomBytes(24).toString("base64")}`
process.env["WEBHOOK_SECRET"] = secret
process.env["RECEIVER_PORT"] = "0"
const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
const { receiver } = await import("./readme-webhook-example.js")
await new Promise<void>((resolve) => (receiver.listening ? resolve() : receiver.once("listening", () => resolve())))
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`
afterAll(() => {
  log.mockRestore()
  receiver.close()
})

// The feed's example event (the contract's docs), with a previous default.
const [example] = OPERATION_DOCS.listEvents.successExample.data
const body = JSON.stringify({ ...example, data: { payment_method_id: "pm_2", previous_default_id: "pm_1" } })
const headers = (signedBody: string) => {
  const at = new Date()
  return {
    "webhook-id": "019a4f6e-3c2b-7d40-9a1e-5f6b7c8d9e0f",
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign("019a4f6e-3c2b-7d40-9a1e-5f6b7c8d9e0f", at, signedBody)
  }
}

describe("the README's webhook receiver", () => {
  it("is in the README as it is here", () => {
    const source = readFileSync(new URL("./readme-webhook-example.ts", import.meta.url), "utf8")
    const example = source.slice(source.indexOf("// README:start\n") + 16, source.indexOf("// README:end"))
    expect(readFileSync(new URL("../../../README.md", import.meta.url), "utf8")).toContain(example)
  })

  it("takes a signed event and prints it; refuses a changed one", async () => {
    const taken = await fetch(url, { method: "POST", headers: headers(body), body })
    expect(taken.status).toBe(204)
    expect(log.mock.calls).toEqual([["users/u_1: default pm_1 -> pm_2"]])
    const changed = await fetch(url, { method: "POST", headers: headers(body), body: body.replace("pm_2", "pm_9") })
    expect(changed.status).toBe(400)
    expect(log).toHaveBeenCalledTimes(1)
  })
})
