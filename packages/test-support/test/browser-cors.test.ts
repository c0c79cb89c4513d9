import { startFastifyServer } from "@accord/adapter-fastify"
import { startWith } from "@accord/test-support"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { randomBytes } from "node:crypto"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import type { Browser } from "playwright-core"
import { chromiumSkipReason, launchChromium } from "../../../test-support/chromium.js"
import { rolldown } from "rolldown"

// docs/api.md, "CORS": a page on another origin (another port) uses the bundled @accord/client to call every
// operation of a server that allows its origin, and reads the ETag and X-Request-Id; a server that does not allow it
// is refused by the browser itself. Debian's Chromium (test-support/chromium.ts).
const skipReason = chromiumSkipReason

const repoRoot = fileURLToPath(new URL("../../..", import.meta.url))
const program = fileURLToPath(new URL("./fixtures/cors-page.ts", import.meta.url))
const token = `cors-browser-${randomBytes(12).toString("hex")}`
const seed = { users: [{ id: "u_page", token }], payment_methods: [{ id: "pm_page", user_id: "u_page" }] }

/** The page's program as a browser loads it: one ES module, from the workspace packages' sources. */
const bundle = async (): Promise<string> => {
  const built = await rolldown({
    input: program,
    cwd: repoRoot,
    platform: "browser",
    logLevel: "silent",
    resolve: {
      conditionNames: ["@accord/source", "import", "browser", "default"],
      extensionAlias: { ".js": [".ts", ".js"] }
    }
  })
  try {
    const { output } = await built.generate({ format: "esm" })
    const [chunk] = output
    if (chunk === undefined || chunk.type !== "chunk") throw new Error("the bundle has no entry chunk")
    return chunk.code
  } finally {
    await built.close()
  }
}

/** The page's own origin: an HTML page and its module, nothing else. */
const servePage = (code: string): Promise<Server> =>
  new Promise((resolve) => {
    const server = createServer((request, response) => {
      if (request.url === "/app.js") {
        response.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(code)
      } else {
        response
          .writeHead(200, { "content-type": "text/html; charset=utf-8" })
          .end('<!doctype html><title>page</title><script type="module" src="/app.js"></script>')
      }
    })
    server.listen(0, "127.0.0.1", () => resolve(server))
  })

interface Seen {
  readonly operation: string
  readonly status?: number
  readonly etag?: string
  readonly requestId?: string
  readonly transportError?: string
}

const OPERATIONS = [
  "health",
  "liveness",
  "readiness",
  "createPublicPlanEntry",
  "getLanguagePreferences",
  "updateLanguagePreferences",
  "listPaymentMethods",
  "setDefaultPaymentMethod"
]
const TAGGED = new Set([
  "getLanguagePreferences",
  "updateLanguagePreferences",
  "listPaymentMethods",
  "setDefaultPaymentMethod"
])

describe.skipIf(skipReason !== undefined)(
  skipReason === undefined ? "CORS in Chromium" : `CORS in Chromium (${skipReason})`,
  () => {
    let page: Server | undefined
    let pageOrigin = ""
    let browser: Browser | undefined
    const apis: Array<{ readonly url: string; readonly close: () => Promise<void> }> = []

    beforeAll(async () => {
      page = await servePage(await bundle())
      pageOrigin = `http://127.0.0.1:${(page.address() as AddressInfo).port}`
      // The first allows the page's origin; the second only another one.
      apis.push(await startWith(startFastifyServer, { corsOrigins: [pageOrigin] })(seed))
      apis.push(await startWith(startFastifyServer, { corsOrigins: ["http://127.0.0.1:1"] })(seed))
      browser = await launchChromium()
    }, 60_000)

    afterAll(async () => {
      await browser?.close()
      for (const api of apis) await api.close()
      await new Promise((resolve) => page?.close(resolve))
    })

    const runIn = async (apiUrl: string): Promise<ReadonlyArray<Seen>> => {
      if (browser === undefined) throw new Error("the browser did not start")
      const tab = await browser.newPage()
      try {
        await tab.goto(`${pageOrigin}/`, { waitUntil: "load" })
        await tab.waitForFunction(() => "runAccord" in globalThis)
        return await tab.evaluate(
          ([baseUrl, bearer]) =>
            (
              globalThis as unknown as { runAccord: (url: string, token: string) => Promise<ReadonlyArray<Seen>> }
            ).runAccord(baseUrl, bearer),
          [`${apiUrl}/api`, token] as const
        )
      } finally {
        await tab.close()
      }
    }

    it("a page on an allowed origin calls every operation and reads the ETag and X-Request-Id", async () => {
      const seen = await runIn(apis[0]?.url ?? "")
      expect(seen.map((entry) => entry.operation)).toEqual(OPERATIONS)
      for (const entry of seen) {
        expect(entry.transportError, entry.operation).toBeUndefined()
        expect(entry.status, entry.operation).toBe(entry.operation === "createPublicPlanEntry" ? 201 : 200)
        expect(entry.requestId, entry.operation).toMatch(/^[A-Za-z0-9._-]{1,128}$/)
        if (TAGGED.has(entry.operation)) expect(entry.etag, entry.operation).toMatch(/^"[0-9a-f]{16}-[0-9a-f]+"$/)
        else expect(entry.etag, entry.operation).toBeUndefined()
      }
    }, 60_000)

    it("a page on an origin the server does not allow is refused by the browser: no answer reaches it", async () => {
      const seen = await runIn(apis[1]?.url ?? "")
      expect(seen).toEqual(OPERATIONS.map((operation) => ({ operation, transportError: "network" })))
    }, 60_000)
  }
)
