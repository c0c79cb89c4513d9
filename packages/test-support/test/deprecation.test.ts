import type { RunningServer } from "@accord/node/server"
import { startExpressServer } from "@accord/adapter-express"
import { startFastifyServer } from "@accord/adapter-fastify"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { startKoaServer } from "@accord/adapter-koa"
import { paths, send, toAliasPath } from "@accord/conformance"
import { readDeprecation } from "@accord/contract"
import type { DeprecatedCall } from "@accord/core"
import {
  aliasParityCorpus,
  makeParityFixture,
  parityCorpus,
  runCorpus,
  startWith,
  type StartAdapter
} from "@accord/test-support"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"

// docs/api.md, "Versioning": the spec's `/v1/payment-methods/{id}/`, a deprecated alias of setDefaultPaymentMethod,
// on every adapter: the parity corpus sent to it answers as the operation's own path does, and past its sunset (a
// date in the past given at start) it answers 410 `gone` naming its successor.

const adapters: ReadonlyArray<readonly [name: string, start: StartAdapter]> = [
  ["koa", startKoaServer],
  ["fastify", startFastifyServer],
  ["express", startExpressServer],
  ["fetch", startFetchServer]
]

const fixture = makeParityFixture()
const corpus = parityCorpus(fixture)
const { corpus: viaAlias, aliased } = aliasParityCorpus(corpus)
const headersOf = (res: { readonly headers: Readonly<Record<string, string>> }) => (name: string) =>
  res.headers[name.toLowerCase()] ?? null

describe("the deprecated alias answers the parity corpus as its operation does", () => {
  const servers: Array<readonly [name: string, server: RunningServer]> = []
  let own: Awaited<ReturnType<typeof runCorpus>> = []

  beforeAll(async () => {
    // Separate memory stores seeded alike: the corpus is replayable, so each answer depends only on earlier ones.
    // The operation's own paths once, on Koa: the reference every adapter's answers on the alias are held to.
    const reference = await startWith(startKoaServer)(fixture.seed)
    try {
      own = await runCorpus(reference.url, corpus)
    } finally {
      await reference.close()
    }
    servers.push(
      ...(await Promise.all(
        adapters.map(async ([name, start]) => [name, await startWith(start)(fixture.seed)] as const)
      ))
    )
  })
  afterAll(async () => {
    await Promise.all(servers.map(([, server]) => server.close()))
  })

  it("the corpus reaches the alias: its PUTs, other methods and both slash forms", () => {
    expect(aliased.length).toBeGreaterThan(8)
    expect(viaAlias.filter((c) => c.request.path.startsWith("/api/v1/payment-methods/"))).toHaveLength(aliased.length)
  })

  it.each(adapters)("%s: same status, contract headers, request-id behaviour and body bytes", async (name) => {
    const server = servers.find(([started]) => started === name)?.[1]
    const alias = await runCorpus(server?.url ?? "", viaAlias)
    expect(own.filter((answer) => answer.status === 0)).toEqual([])
    expect(alias).toEqual(own)
  })
})

describe.each(adapters)("%s: deprecation headers, the metric's hook, and 410 past the sunset", (_name, start) => {
  const calls: Array<DeprecatedCall> = []
  const sunsetAt = new Date(Date.now() + 86_400_000 * 200)
  let current: RunningServer | undefined
  let retired: RunningServer | undefined
  const methodPath = paths.paymentMethod(fixture.methods[1] ?? "")
  const aliasPath = toAliasPath("/api", methodPath) ?? ""
  const user = { Authorization: `Bearer ${fixture.user.token}` }

  beforeAll(async () => {
    current = await startWith(start, {
      aliasDates: { deprecatedAt: new Date("2026-01-01T00:00:00Z"), sunsetAt },
      onDeprecatedCall: (call) => calls.push(call)
    })(fixture.seed)
    retired = await startWith(start, {
      aliasDates: { deprecatedAt: new Date("2020-01-01T00:00:00Z"), sunsetAt: new Date("2021-01-01T00:00:00Z") },
      onDeprecatedCall: (call) => calls.push(call)
    })(fixture.seed)
  })
  afterAll(async () => {
    await Promise.all([current?.close(), retired?.close()])
  })

  it("before the sunset: the dates given at start, on a success and on an error, and the caller's kind told", async () => {
    const ok = await send(current?.url ?? "", { method: "PUT", path: aliasPath, headers: user })
    const refused = await send(current?.url ?? "", { method: "PUT", path: aliasPath })
    expect([ok.status, refused.status]).toEqual([200, 401])
    for (const res of [ok, refused]) {
      expect(res.headers["deprecation"]).toBe("@1767225600")
      expect(res.headers["sunset"]).toBe(new Date(Math.floor(sunsetAt.getTime() / 1000) * 1000).toUTCString())
      expect(readDeprecation(headersOf(res))?.successor).toBe(methodPath)
      expect(readDeprecation(headersOf(res))?.docs).toBe("/api/docs")
    }
    const own = await send(current?.url ?? "", { method: "PUT", path: methodPath, headers: user })
    expect(own.status).toBe(200)
    expect(own.headers["deprecation"]).toBeUndefined()
    expect(calls.map(({ credential, gone, route }) => ({ credential, gone, route }))).toEqual([
      { credential: "user", gone: false, route: "/api/v1/payment-methods/{id}/" },
      { credential: "none", gone: false, route: "/api/v1/payment-methods/{id}/" }
    ])
  })

  it("past the sunset: 410 gone naming the successor, the headers still on; the operation's path unchanged", async () => {
    calls.length = 0
    const gone = await send(retired?.url ?? "", { method: "PUT", path: aliasPath, headers: user })
    expect(gone.status).toBe(410)
    expect(gone.headers["content-type"]).toBe("application/problem+json; charset=utf-8")
    expect(JSON.parse(gone.body.toString("utf8"))).toEqual({
      type: "about:blank",
      title: "Gone",
      status: 410,
      detail: `This path was retired at its sunset date; call ${methodPath} instead.`,
      code: "gone"
    })
    expect(gone.headers["sunset"]).toBe("Fri, 01 Jan 2021 00:00:00 GMT")
    expect(calls).toEqual([
      {
        route: "/api/v1/payment-methods/{id}/",
        operationId: "setDefaultPaymentMethod",
        credential: "unchecked",
        gone: true
      }
    ])
    const own = await send(retired?.url ?? "", { method: "PUT", path: methodPath, headers: user })
    expect(own.status).toBe(200)
  })
})
