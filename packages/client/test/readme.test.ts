import { readFileSync } from "node:fs"
import { describe, expect, it, vi } from "@effect/vitest"
import { Webhook } from "standardwebhooks"
import { OPERATION_DOCS } from "@accord/contract"
import { eventStreamSkipReason } from "../../../test-support/event-stream.js"

const read = (relative: string) => readFileSync(new URL(relative, import.meta.url), "utf8")

/** The README's code block under `heading`. */
const exampleUnder = (heading: string) =>
  new RegExp(`## ${heading}\\n[\\s\\S]*?\`\`\`ts\\n([\\s\\S]*?)\`\`\``).exec(read("../README.md"))?.[1]

/** Runs an example module and returns what it printed. */
const printedBy = async (load: () => Promise<unknown>) => {
  const log = vi.spyOn(console, "log").mockImplementation(() => undefined)
  try {
    await load()
    return log.mock.calls
  } finally {
    log.mockRestore()
  }
}

describe("README", () => {
  // The browser example runs in Chromium, bundled three ways: test/bundle.test.ts.
  it.each([
    ["Example: in a browser", "./readme-browser-example.ts"],
    ["Example: against a server", "./readme-server-example.ts"],
    ["Example: a host test, in process", "./readme-in-process-example.ts"],
    ["Example: the Effect flavour", "./readme-effect-example.ts"],
    ["Receiving webhooks", "./readme-webhooks-fetch-example.ts"],
    ["Following the events", "./readme-events-example.ts"]
  ])("shows the example file verbatim under %s", (heading, file) => {
    expect(exampleUnder(heading)).toBe(read(file))
  })

  it("the example against a server prints what its comments say", async () => {
    expect(await printedBy(() => import("./readme-server-example.js"))).toStrictEqual([
      [200, "en-US", 60],
      [404, "not_found"],
      ["validation_failed", [{ pointer: "/timezone", code: "invalid_format", detail: "must be a multiple of 15" }]]
    ])
  })

  it("the in-process host test prints what its comments say", async () => {
    expect(await printedBy(() => import("./readme-in-process-example.js"))).toStrictEqual([["pm_1"], [undefined]])
  })

  it("names each entry of the package's exports map in its table of imports", () => {
    const exported = Object.keys((JSON.parse(read("../package.json")) as { exports: object }).exports)
    const named = [...read("../README.md").matchAll(/^\| `(@accord\/client[^`]*)` \|/gm)].map((match) => match[1])
    expect(named).toEqual(exported.map((entry) => entry.replace(/^\./, "@accord/client")))
  })

  it("the webhook handler takes what the server signs and says why it refuses the rest", async () => {
    const { onWebhook } = await import("./readme-webhooks-fetch-example.js")
    const secret = `whsec_${Buffer.from(crypto.getRandomValues(new Uint8Array(24))).toString("base64")}`
    const [event] = OPERATION_DOCS.listEvents.successExample.data
    const body = JSON.stringify(event)
    /** A delivery of `sent`, signed as the server signs `body`. */
    const delivery = (sent = body) =>
      new Request("http://127.0.0.1/hooks", {
        method: "POST",
        headers: {
          "webhook-id": "msg_1",
          "webhook-timestamp": String(Math.floor(Date.now() / 1000)),
          "webhook-signature": new Webhook(secret).sign("msg_1", new Date(), body)
        },
        body: sent
      })
    const answers: Array<readonly [number, string]> = []
    const printed = await printedBy(async () => {
      for (const [request, key] of [
        [delivery(), secret],
        // A rotation as the server reads WEBHOOK_SECRET: two spaces, a line break after.
        [delivery(), `whsec_${"A".repeat(32)}  ${secret}\n`],
        [delivery(body.replace("pm_2", "pm_9")), secret],
        [delivery(), "whsec_short"]
      ] as const) {
        const response = await onWebhook(request, key)
        answers.push([response.status, await response.text()])
      }
    })
    expect(answers).toEqual([
      [204, ""],
      [204, ""],
      [400, "signature"],
      [400, "secret"]
    ])
    expect(printed).toEqual([
      ["payment_method.default_changed", "users/u_1"],
      ["payment_method.default_changed", "users/u_1"]
    ])
  })

  it("the Effect example prints what its comments say", async () => {
    expect(await printedBy(() => import("./readme-effect-example.js"))).toStrictEqual([[[true, "not_found"]]])
  })
})

// The events example needs the server's stream (issue 39): skipped, saying why, where the server does not stream.
const streamSkipReason = await eventStreamSkipReason()

describe.skipIf(streamSkipReason !== undefined)(
  streamSkipReason === undefined
    ? "README, following the events"
    : `README, following the events (${streamSkipReason})`,
  () => {
    it("the events example prints what its comments say: the replayed change, the live one, the id to resume", async () => {
      expect(await printedBy(() => import("./readme-events-example.js"))).toStrictEqual([
        [1, { timezone: { old: 0, new: 60 } }],
        [2, { language: { old: "en", new: "pt-BR" } }],
        [true]
      ])
    })
  }
)
