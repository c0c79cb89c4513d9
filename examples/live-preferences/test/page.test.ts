import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Browser, Page } from "playwright-core"
import { chromiumSkipReason, launchChromium } from "../../../test-support/chromium.js"
import { eventStreamSkipReason } from "../../../test-support/event-stream.js"
import { startLivePreferences, type LivePreferencesServer } from "../src/server.js"

// The example's page in Chromium: the values it loads, then each change made through the API shown without a reload,
// as the stream brings it. The page bundles the built client (`tsc -b` first, as `npm start` does).

const streamSkipReason = await eventStreamSkipReason()

/** Sets preferences through the API, as another device would. */
const update = async (server: LivePreferencesServer, body: object) => {
  const response = await fetch(`${server.url}/api/users/v1/preferences/language/`, {
    method: "PUT",
    headers: { authorization: `Bearer ${server.token}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  expect(response.status).toBe(200)
}

/** Waits, as long as the test may last, until the element `id` of the page shows `text`. */
const shows = (page: Page, id: string, text: string) =>
  // A text to evaluate in the page: this file is checked without the DOM's types.
  page.waitForFunction(
    `document.getElementById(${JSON.stringify(id)})?.textContent === ${JSON.stringify(text)}`,
    undefined,
    {
      timeout: 0
    }
  )

describe.skipIf(chromiumSkipReason !== undefined)(
  chromiumSkipReason === undefined
    ? "the live preferences page in Chromium"
    : `the live preferences page in Chromium (${chromiumSkipReason})`,
  () => {
    let server: LivePreferencesServer | undefined
    let browser: Browser | undefined

    beforeAll(async () => {
      server = await startLivePreferences({ port: 0 })
      browser = await launchChromium()
    }, 60_000)

    afterAll(async () => {
      await browser?.close()
      await server?.close()
    })

    /** The page open as the seeded user, with what it threw. */
    const open = async () => {
      if (server === undefined || browser === undefined) throw new Error("the server or the browser did not start")
      const page = await browser.newPage()
      const errors: Array<string> = []
      page.on("pageerror", (error) => errors.push(error.message))
      await page.goto(`${server.url}/#token=${server.token}`)
      return { page, errors, server }
    }

    it("shows the user's current preferences", async () => {
      const { page, errors, server } = await open()
      try {
        await update(server, { timezone: 60 })
        await page.reload()
        await shows(page, "timezone", "60")
        expect(await page.textContent("#language")).toBe("en")
        expect(await page.textContent("#mfa_enabled")).toBe("false")
        expect(errors).toEqual([])
      } finally {
        await page.close()
      }
    }, 60_000)

    it("applies the changes of a preferences.updated event, the stream answered in the browser", async () => {
      if (server === undefined || browser === undefined) throw new Error("the server or the browser did not start")
      const page = await browser.newPage()
      const asked: Array<string | undefined> = []
      // The stream as the server writes it (docs/api.md, "Events"), given by the browser's own routing: the page's
      // handling of an event, whether the server streams or not.
      await page.route("**/api/users/v1/events/", (route) => {
        const headers = route.request().headers()
        if (headers["accept"] !== "text/event-stream") return route.continue()
        asked.push(headers["last-event-id"])
        const event = {
          specversion: "1.0",
          id: "019a4f6e-0000-7000-8000-000000000001",
          source: "/api",
          type: "preferences.updated",
          time: "2026-11-21T10:05:00.000Z",
          subject: "users/u_1",
          sequence: 1,
          datacontenttype: "application/json",
          data: { changes: { language: { old: "en", new: "de-CH" }, mfa_enabled: { old: false, new: true } } }
        }
        return route.fulfill({
          status: 200,
          headers: { "content-type": "text/event-stream" },
          body: `retry: 60000\n\nid: ${event.id}\ndata: ${JSON.stringify(event)}\n\n`
        })
      })
      const errors: Array<string> = []
      page.on("pageerror", (error) => errors.push(error.message))
      try {
        await page.goto(`${server.url}/#token=${server.token}`)
        await shows(page, "language", "de-CH")
        await shows(page, "mfa_enabled", "true")
        // The stream ended after its event: the page waits the server's retry time, to ask after that event.
        await shows(page, "status", "reconnecting in 60 s")
        // Asked once, after the feed's last event, which the page read before the values.
        const feed = await fetch(`${server.url}/api/users/v1/events/?limit=100`, {
          headers: { authorization: `Bearer ${server.token}` }
        })
        const { data } = (await feed.json()) as { data: ReadonlyArray<{ id: string }> }
        expect(asked).toEqual([data.at(-1)?.id])
        expect(errors).toEqual([])
      } finally {
        await page.close()
      }
    }, 60_000)

    it.skipIf(streamSkipReason !== undefined)(
      streamSkipReason === undefined
        ? "shows each change made through the API as it happens, without a reload"
        : `shows each change made through the API as it happens (${streamSkipReason})`,
      async () => {
        const { page, errors, server } = await open()
        try {
          await shows(page, "status", "live")
          // A mark on this document: a reload or a navigation would lose it.
          await page.evaluate("window.loadedOnce = true")
          await update(server, { language: "pt-BR" })
          await shows(page, "language", "pt-BR")
          await update(server, { mfa_enabled: true, timezone: -180 })
          await shows(page, "mfa_enabled", "true")
          await shows(page, "timezone", "-180")
          // The same document throughout: no navigation, the values came by the stream.
          expect(await page.evaluate("window.loadedOnce")).toBe(true)
          expect(errors).toEqual([])
        } finally {
          await page.close()
        }
      },
      60_000
    )
  }
)
