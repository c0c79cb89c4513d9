import { makeFetchHandler } from "@accord/adapter-fetch"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { startKoaServer } from "@accord/adapter-koa"
import { makeAccordClient, type AccordClientMethods, type FetchLike } from "@accord/client"
import type { RunningServer } from "@accord/node/server"
import { makeAccordTestKit, type AccordTestKit } from "@accord/testkit"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

/** The parts of an answer that are the contract's (docs/api.md, "Headers on every response"), not the transport's. */
const CONTRACT_HEADERS = ["content-type", "cache-control", "x-content-type-options", "www-authenticate", "retry-after"]

interface Exchange {
  readonly status: number
  readonly headers: Readonly<Record<string, string | null>>
  readonly body: string
}

/** A fetch that records what came back through `fetch`, answering the client with the same response. */
const recorded = (fetch: FetchLike) => {
  const exchanges: Array<Exchange> = []
  const recording: FetchLike = async (request) => {
    const response = await fetch(request)
    const body = await response.clone().text()
    const headers = Object.fromEntries(CONTRACT_HEADERS.map((name) => [name, response.headers.get(name)]))
    exchanges.push({ status: response.status, headers, body })
    return response
  }
  return { recording, exchanges }
}

/** The same calls, each with a result that does not change the store. */
const calls = async (kit: AccordTestKit, client: (token: string | undefined) => AccordClientMethods) => {
  const user = client(kit.user.token)
  return [
    await client(undefined).health(),
    await user.getLanguagePreferences(),
    await user.listPaymentMethods(),
    await client(undefined).listPaymentMethods(),
    await client("unknown").getLanguagePreferences(),
    await client(kit.client.token).getLanguagePreferences(),
    await user.updateLanguagePreferences({ body: { timezone: 7, language: "" } }),
    await user.setDefaultPaymentMethod({ params: { id: "pm_404" } }),
    // @ts-expect-error: the types refuse false; a caller that sends it anyway gets the server's 400 not_allowed
    await user.setDefaultPaymentMethod({ params: { id: "pm_1" }, body: { is_default: false } })
  ]
}

describe("in process through the fetch handler: the same answers, byte for byte, as over a port", () => {
  let kit: AccordTestKit
  const servers: Array<RunningServer> = []
  beforeAll(async () => {
    kit = await makeAccordTestKit()
  })
  afterAll(async () => {
    for (const server of servers) await server.close()
    await kit.dispose()
  })

  /** Runs `calls` against a base URL and fetch on the kit's store, and returns the results and the exchanges. */
  const run = async (baseUrl: string, fetch: FetchLike) => {
    const { recording, exchanges } = recorded(fetch)
    const client = (token: string | undefined) =>
      makeAccordClient({ baseUrl, fetch: recording, ...(token !== undefined && { token }) })
    return { results: await calls(kit, client), exchanges }
  }

  it("the handler, the fetch server and Koa answer alike", async () => {
    const inProcess = await run("http://accord.test/api", makeFetchHandler({ runtime: kit.runtime, prefix: "/api" }))
    for (const start of [startFetchServer, startKoaServer]) {
      const server = await start({ runtime: kit.runtime, port: 0 })
      servers.push(server)
      const overPort = await run(`${server.url}/api`, (request) => fetch(request))
      expect(overPort.exchanges).toStrictEqual(inProcess.exchanges)
      expect(overPort.results).toStrictEqual(inProcess.results)
    }
    expect(inProcess.exchanges.map((exchange) => exchange.status)).toStrictEqual([
      200, 200, 200, 401, 401, 403, 400, 404, 400
    ])
  })

  it("opens no socket: it runs with the global fetch disabled", async () => {
    const original = globalThis.fetch
    globalThis.fetch = () => Promise.reject(new Error("no network in this test"))
    try {
      const handler = makeFetchHandler({ runtime: kit.runtime, prefix: "/api" })
      const client = makeAccordClient({ baseUrl: "http://accord.test/api", token: kit.user.token, fetch: handler })
      expect(await client.health()).toStrictEqual({ ok: true, status: 200, value: { status: "ok" }, etag: undefined })
      expect((await client.listPaymentMethods()).ok).toBe(true)
    } finally {
      globalThis.fetch = original
    }
  })
})
