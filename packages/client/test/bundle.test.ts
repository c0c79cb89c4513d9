import { readFileSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { buffer } from "node:stream/consumers"
import { makeFetchHandler } from "@accord/adapter-fetch"
import type { FetchLike } from "@accord/client"
import { OPERATION_DOCS } from "@accord/contract"
import { makeAccordTestKit, type AccordTestKit } from "@accord/testkit"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import type { Browser } from "playwright-core"
import { chromiumSkipReason, launchChromium } from "../../../test-support/chromium.js"
import { bundleAll, EXAMPLES, readmeWithSizes, sizesTable, validatedExample } from "./bundles.js"

// Issue 30: the README's browser example as esbuild, rolldown and bun bundle it from the built packages (test/bundles.ts;
// `tsc -b` first): what is in each bundle, its weight, the README's table of sizes, and each bundle run in Chromium.

/** The default client's budget on every bundler, gzip (README, "Bundle size"): ahead of oRPC's 14.1 KB and Hono's 16.4. */
const BUDGET_GZIP_BYTES = 12_000

/** Files of the server side: core, the domain's ports and use cases, Node glue, stores, adapters, the server, tooling. */
const SERVER_SIDE =
  /^packages\/(core|node|store-[^/]+|adapter-[^/]+|server|testkit|rate-limit|auth-jwt|conformance|api-reference|cli-options)\/|^packages\/domain\/(src|dist)\/(ports|use-cases)\//
const EFFECT = /(^|\/)node_modules\/effect\//

/** Pieces of the operations' docs (OpenAPI summaries and descriptions), which only the OpenAPI generator reads. */
const DOCS_TEXTS = Object.values(OPERATION_DOCS)
  .flatMap((docs) => [docs.summary, docs.description])
  // Cut at quotes and backslashes, which a minifier may write otherwise; prose only (words with spaces between), not a
  // name the bundle has for its own reasons (a problem code a description quotes, `precondition_required`).
  .flatMap((text) => text.split(/["'`\\]/))
  .filter((piece) => piece.length >= 20 && piece.trim().includes(" "))

const read = (file: string) => readFileSync(new URL(`../../../${file}`, import.meta.url), "utf8")

const bundles = await bundleAll()

describe.each(bundles.map(({ example, bundle }) => [`${bundle.bundler} ${bundle.version}`, example, bundle] as const))(
  "the README's browser example by %s, %s client",
  (_, example, bundle) => {
    const figures = `${bundle.code.length} bytes minified, ${bundle.gzipBytes} gzip`

    it("is one self-contained module: no chunk split off, nothing left to import", () => {
      expect(bundle.leftOver).toStrictEqual([])
    })

    it("is made of the built client and contract, and holds no file of the server side", () => {
      expect(bundle.inputs.some((file) => file.startsWith("packages/client/dist/"))).toBe(true)
      expect(bundle.inputs.some((file) => file.startsWith("packages/contract/dist/"))).toBe(true)
      expect(bundle.inputs.filter((file) => SERVER_SIDE.test(file) || file.includes("/src/"))).toStrictEqual([])
    })

    it("holds no text of the operations' docs", () => {
      expect(DOCS_TEXTS.length).toBeGreaterThan(8)
      expect(DOCS_TEXTS.filter((text) => bundle.code.includes(text))).toStrictEqual([])
    })

    if (example === "default") {
      it("holds nothing of effect: no Schema, and the contract's plain routes rather than its operations", () => {
        expect(bundle.inputs.filter((file) => EFFECT.test(file))).toStrictEqual([])
        expect(bundle.inputs).toContain("packages/contract/dist/operation-routes.generated.js")
        expect(bundle.inputs.filter((file) => file.startsWith("packages/contract/dist/operations"))).toStrictEqual([])
      })

      it(`stays within ${BUDGET_GZIP_BYTES} bytes gzip`, () => {
        expect(bundle.gzipBytes, figures).toBeLessThanOrEqual(BUDGET_GZIP_BYTES)
      })
    }
  }
)

describe("the README's sizes and the validated twin of its example", () => {
  it("the table in the README is the bundles' sizes", () => {
    const readme = read("packages/client/README.md")
    expect(readme, "out of date: run `npm run generate`").toBe(readmeWithSizes(readme, sizesTable(bundles)))
  })

  it("the validated example is the README's, importing @accord/client/validated", () => {
    expect(read(EXAMPLES.validated), "out of date: run `npm run generate`").toBe(
      validatedExample(read(EXAMPLES.default))
    )
  })
})

/** What the example prints: its closing comment lines, `// ` cut off. */
const printed = (() => {
  const lines = read(EXAMPLES.default).trimEnd().split("\n")
  let first = lines.length
  while (first > 0 && lines[first - 1]?.startsWith("// ")) first -= 1
  return lines.slice(first).map((line) => line.slice("// ".length))
})()

/** Where the example keeps its token in the page's session storage. */
const tokenKey = /sessionStorage\.getItem\("([^"]+)"\)/.exec(read(EXAMPLES.default))?.[1] ?? "(none in the example)"

/** A request to the page's origin under /api, handed to Accord's fetch handler: the page and the API on one origin. */
const toApi = async (api: FetchLike, request: IncomingMessage, response: ServerResponse): Promise<void> => {
  const headers = new Headers()
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    const [name = "", value = ""] = request.rawHeaders.slice(index, index + 2)
    if (!["host", "connection"].includes(name.toLowerCase())) headers.append(name, value)
  }
  const body = await buffer(request)
  const answer = await api(
    new Request(`http://page.test${request.url ?? "/"}`, {
      method: request.method ?? "GET",
      headers,
      ...(body.length > 0 && { body })
    })
  )
  response.writeHead(answer.status, Object.fromEntries(answer.headers)).end(Buffer.from(await answer.arrayBuffer()))
}

/** The page's origin: an HTML page loading `/app.js` (the bundle of the moment) and the API under `/api`. */
const servePage = (api: FetchLike) => {
  let app = ""
  const server = createServer((request, response) => {
    if (request.url?.startsWith("/api/")) void toApi(api, request, response)
    else if (request.url === "/app.js")
      response.writeHead(200, { "content-type": "text/javascript; charset=utf-8" }).end(app)
    else
      response
        .writeHead(200, { "content-type": "text/html; charset=utf-8" })
        .end('<!doctype html><title>page</title><script type="module" src="/app.js"></script>')
  })
  return { server, serve: (code: string) => (app = code) }
}

const skipReason = chromiumSkipReason

describe.skipIf(skipReason !== undefined)(
  skipReason === undefined ? "each bundle in Chromium" : `each bundle in Chromium (${skipReason})`,
  () => {
    let kit: AccordTestKit | undefined
    let browser: Browser | undefined
    let page: ReturnType<typeof servePage> | undefined
    let origin = ""

    beforeAll(async () => {
      kit = await makeAccordTestKit()
      page = servePage(makeFetchHandler({ runtime: kit.runtime, prefix: "/api" }))
      const server: Server = page.server
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      browser = await launchChromium()
    }, 60_000)

    afterAll(async () => {
      await browser?.close()
      await new Promise((resolve) => page?.server.close(resolve))
      await kit?.dispose()
    })

    it.each(bundles.map(({ example, bundle }) => [bundle.bundler, example, bundle] as const))(
      "%s's bundle of the %s client runs and prints what the example's comments say",
      async (_, __, bundle) => {
        if (browser === undefined || page === undefined || kit === undefined) throw new Error("the page did not start")
        page.serve(bundle.code)
        const tab = await browser.newPage()
        try {
          await tab.addInitScript(({ key, token }) => sessionStorage.setItem(key, token), {
            key: tokenKey,
            token: kit.user.token
          })
          const lines: Array<string> = []
          const errors: Array<string> = []
          const done = new Promise<void>((resolve) => {
            const settled = () => {
              if (lines.length >= printed.length || errors.length > 0) resolve()
            }
            tab.on("console", (message) => {
              lines.push(message.text())
              settled()
            })
            tab.on("pageerror", (error) => {
              errors.push(error.message)
              settled()
            })
          })
          await tab.goto(`${origin}/`)
          await done
          expect(errors).toStrictEqual([])
          expect(lines).toStrictEqual(printed)
        } finally {
          await tab.close()
        }
      },
      60_000
    )
  }
)
