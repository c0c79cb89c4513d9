import { startFastifyServer } from "@accord/adapter-fastify"
import { loadApiReference } from "@accord/api-reference"
import { Seed, StoreAdmin } from "@accord/domain"
import type { RunningServer } from "@accord/node/server"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { MemoryStoreLive } from "@accord/store-memory"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import { randomBytes } from "node:crypto"
import type { Browser } from "playwright-core"
import { chromiumSkipReason, launchChromium } from "../../../test-support/chromium.js"

const skipReason = chromiumSkipReason

const token = `browser-${randomBytes(12).toString("hex")}`

describe.skipIf(skipReason !== undefined)(
  skipReason === undefined ? "API reference page in Chromium" : `API reference page in Chromium (${skipReason})`,
  () => {
    const runtime = ManagedRuntime.make(Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive(testScryptCost)))
    let server: RunningServer | undefined
    let browser: Browser | undefined

    beforeAll(async () => {
      const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_browser", token }] })
      await runtime.runPromise(Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(seed)))
      server = await startFastifyServer({ host: "127.0.0.1", port: 0, runtime, docs: loadApiReference() })
      browser = await launchChromium()
    })

    afterAll(async () => {
      await browser?.close()
      await server?.close()
      await runtime.dispose()
    })

    it("authorizes with a user's token and sets the language from 'Try it out', no request of the page failing", async () => {
      if (server === undefined || browser === undefined) throw new Error("the server or the browser did not start")
      const origin = new URL(server.url).origin
      const page = await browser.newPage()
      // Every request of the page to the server, with what became of it (a status, or why it failed).
      const outcomes: Array<string> = []
      page.on("response", (response) => outcomes.push(`${response.status()} ${response.url()}`))
      // docs/api.md, "The docs page's files": the browser asks for br and gets swagger-ui's files in it.
      const codings = new Map<string, string | undefined>()
      page.on("response", (response) =>
        codings.set(new URL(response.url()).pathname, response.headers()["content-encoding"])
      )
      page.on("requestfailed", (request) =>
        outcomes.push(`failed ${request.url()}: ${request.failure()?.errorText ?? "unknown"}`)
      )
      const errors: Array<string> = []
      page.on("pageerror", (error) => errors.push(error.message))
      try {
        await page.goto(`${server.url}/api/docs`, { waitUntil: "load" })

        // swagger-ui's Authorize dialog: the bearer scheme's value field, Authorize, then Close.
        await page.locator(".auth-wrapper button.authorize").click()
        const dialog = page.locator(".modal-ux")
        // The scheme's description is Markdown: `<token>` shows as written, not swallowed as an HTML tag.
        expect(await dialog.textContent()).toContain("Authorization: Bearer <token>")
        await dialog.locator("input").first().fill(token)
        await dialog.locator("button.authorize").click()
        await dialog.locator("button.btn-done").click()

        const operation = page.locator(".opblock-put", { hasText: "/users/v1/preferences/language/" })
        await operation.locator(".opblock-summary").first().click()
        await operation.locator("button.try-out__btn").click()
        await operation.locator("textarea.body-param__text").fill('{"language": "pt-BR"}')
        await operation.locator("button.execute").click()

        const live = operation.locator(".live-responses-table")
        await expect.poll(() => live.locator("tbody .response-col_status").first().textContent()).toContain("200")
        expect(await live.locator("tbody .response-col_description").first().textContent()).toContain(
          '"language": "pt-BR"'
        )
        // The browser sent the token swagger-ui was given.
        expect(await operation.locator(".curl-command").textContent()).toContain(`Bearer ${token}`)

        // The page's icon is one of its resources: the browser asks for it (on its own time) and it must be there.
        await expect.poll(() => outcomes.some((outcome) => outcome.includes("/api/docs/favicon.svg"))).toBe(true)
        const ownResources = outcomes.filter((outcome) => outcome.includes(origin))
        expect(ownResources.filter((outcome) => !/^[23]\d\d /.test(outcome))).toEqual([])
        for (const file of [
          "docs",
          "docs/init.js",
          "docs/favicon.svg",
          "openapi.json",
          "users/v1/preferences/language/"
        ]) {
          expect(ownResources, file).toContainEqual(
            expect.stringMatching(new RegExp(`^200 ${origin}/api/${file}(\\?|$)`))
          )
        }
        expect(
          outcomes.filter((outcome) => !outcome.includes(origin)),
          "requests to another origin"
        ).toEqual([])
        expect(errors, "errors thrown in the page").toEqual([])
        expect(codings.get("/api/docs/swagger-ui-bundle.js")).toBe("br")
        expect(codings.get("/api/docs/swagger-ui.css")).toBe("br")
        expect(codings.get("/api/docs/init.js")).toBeUndefined()
      } finally {
        await page.close()
      }
    })
  }
)
