import { makeFetchHandler } from "@accord/adapter-fetch"
import { startFetchServer } from "@accord/adapter-fetch/node"
import { accordExpressRouter } from "@accord/adapter-express"
import { accordPlugin } from "@accord/adapter-fastify"
import { accordRouter, startKoaServer } from "@accord/adapter-koa"
import { auditTarget, nextEvent, openEventStream, parseSseBlock } from "@accord/conformance"
import { Seed } from "@accord/domain"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Layer, ManagedRuntime, Schema } from "effect"
import express from "express"
import Fastify from "fastify"
import Koa from "koa"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

// docs/api.md, "Events": the stream through the fetch adapter's ReadableStream (what Bun, Deno and workerd run), its
// bounds, and the drain, which ends every stream at its start and never waits for one.

const seed = Schema.decodeUnknownSync(Seed)({
  users: [
    { id: "u_s1", token: "stream-one" },
    { id: "u_s2", token: "stream-two" }
  ]
})
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive(testScryptCost)))
afterAll(() => runtime.dispose())

const EVENTS = "http://accord.test/api/users/v1/events/"
const PREFERENCES = "http://accord.test/api/users/v1/preferences/language/"
const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

/** Reads a Response's stream block by block (every wait capped by the test's own timeout). */
const blocksOf = (response: Response) => {
  const reader = (response.body as ReadableStream<Uint8Array>).getReader()
  const decoder = new TextDecoder()
  let buffered = ""
  return async (): Promise<string | undefined> => {
    for (;;) {
      const end = buffered.indexOf("\n\n")
      if (end >= 0) {
        const block = buffered.slice(0, end)
        buffered = buffered.slice(end + 2)
        return block
      }
      const read = await reader.read()
      if (read.done) return buffered === "" ? undefined : `incomplete: ${buffered}`
      buffered += decoder.decode(read.value, { stream: true })
    }
  }
}

describe("the events stream on the fetch handler", () => {
  it("streams retry, a live event with the feed's bytes, heartbeats; refuses past the total with 503; ends at the drain", async () => {
    let drain = (): void => {}
    const drainStarted = new Promise<void>((resolve) => (drain = resolve))
    const opened: Array<number> = []
    let sent = 0
    const handler = makeFetchHandler({
      runtime,
      drainStarted,
      eventStreams: {
        heartbeatMs: 20,
        total: 1,
        onOpenChange: (delta) => opened.push(delta),
        onEventsSent: (count) => void (sent += count)
      }
    })
    const response = await handler(
      new Request(EVENTS, { headers: { ...bearer("stream-one"), accept: "text/event-stream" } })
    )
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toBe("text/event-stream")
    expect(response.headers.get("x-accel-buffering")).toBe("no")
    expect(response.headers.get("content-length")).toBeNull()
    const next = blocksOf(response)
    expect(await next()).toBe("retry: 2000")
    expect(opened).toEqual([1])

    // The total bound: a second stream, of another user, is refused before it starts.
    const refused = await handler(
      new Request(EVENTS, { headers: { ...bearer("stream-two"), accept: "text/event-stream" } })
    )
    expect(refused.status).toBe(503)
    expect(((await refused.json()) as { code: string }).code).toBe("unavailable")

    const put = await handler(
      new Request(PREFERENCES, {
        method: "PUT",
        headers: { ...bearer("stream-one"), "content-type": "application/json", "content-length": "15" },
        body: '{"timezone":60}'
      })
    )
    expect(put.status).toBe(200)
    const feed = (await (await handler(new Request(EVENTS, { headers: bearer("stream-one") }))).text()) as string
    const element = JSON.stringify((JSON.parse(feed) as { data: ReadonlyArray<unknown> }).data[0])
    let block = await next()
    while (block?.startsWith(":") === true) block = await next()
    const event = parseSseBlock(block ?? "")
    expect(event.data).toBe(element)
    expect(block).toBe(`id: ${event.id ?? ""}\ndata: ${element}`)
    expect(sent).toBe(1)
    // Idle: heartbeats.
    expect(await next()).toBe(": heartbeat")

    drain()
    // Whatever heartbeats were on their way, then the end: no half block.
    for (block = await next(); block !== undefined; block = await next()) expect(block).toBe(": heartbeat")
    expect(opened).toEqual([1, -1])
  })

  it("Accept decides: JSON without it, 406 for neither; HEAD and a client's credential get no stream", async () => {
    const handler = makeFetchHandler({ runtime })
    const json = await handler(new Request(EVENTS, { headers: { ...bearer("stream-two"), accept: "*/*" } }))
    expect(json.headers.get("content-type")).toBe("application/json; charset=utf-8")
    const both = await handler(
      new Request(EVENTS, { headers: { ...bearer("stream-two"), accept: "application/json, text/event-stream" } })
    )
    expect(both.headers.get("content-type")).toBe("application/json; charset=utf-8")
    const html = await handler(new Request(EVENTS, { headers: { ...bearer("stream-two"), accept: "text/html" } }))
    expect(html.status).toBe(406)
    const head = await handler(
      new Request(EVENTS, { method: "HEAD", headers: { ...bearer("stream-two"), accept: "text/event-stream" } })
    )
    expect(head.headers.get("content-type")).toBe("application/json; charset=utf-8")
  })
})

describe("the events stream on the fetch handler, against a client's unread bytes", () => {
  // docs/SECURITY.md item 44: past `maxUnsentBytes` queued and unread, the answer is errored and its stream stopped.
  const open = (opened: Array<number>) =>
    makeFetchHandler({
      runtime,
      eventStreams: { heartbeatMs: 1, maxUnsentBytes: 200, onOpenChange: (delta) => opened.push(delta) }
    })(new Request(EVENTS, { headers: { ...bearer("stream-two"), accept: "text/event-stream" } }))

  it("a client that reads keeps its stream past many times the bound; one that does not read is cut off", async () => {
    const reading: Array<number> = []
    const reader = (await open(reading)).body?.getReader()
    let received = 0
    // Heartbeats of 13 bytes: four times the bound read, and the stream still runs.
    while (received < 800) received += (await reader?.read())?.value?.byteLength ?? 0
    expect(reading).toEqual([1])
    await reader?.cancel()
    expect(reading).toEqual([1, -1])

    const unread: Array<number> = []
    const idle = await open(unread)
    while (unread.length < 2) await new Promise((resolve) => setTimeout(resolve, 5))
    expect(unread).toEqual([1, -1])
    await expect(idle.text()).rejects.toThrow(/unread/)
  })
})

describe("the drain ends every stream and never waits for one", () => {
  for (const [name, start] of [
    ["koa", startKoaServer],
    ["fetch on Node", startFetchServer]
  ] as const)
    it(`${name}: close() ends an open stream after its last complete block and resolves`, async () => {
      const server = await start({ runtime, host: "127.0.0.1", port: 0, drainTimeoutMs: 60_000 })
      const target = auditTarget({
        url: `${server.url}/api`,
        userToken: "stream-one",
        otherUserToken: "-",
        clientToken: "-"
      })
      const stream = await openEventStream(target, "stream-one")
      try {
        expect(stream.status).toBe(200)
        expect((await stream.next())?.retry).toBe("2000")
        // Every event the user has, then the drain: the stream ends (undefined), not the drain's 60 s limit.
        const closed = server.close()
        for (let block = await stream.next(); block !== undefined; block = await stream.next())
          expect(block.data === undefined || block.id !== undefined).toBe(true)
        await closed
      } finally {
        stream.close()
      }
    })

  it("a live event reaches a stream on the Node bridge", async () => {
    const server = await startKoaServer({ runtime, host: "127.0.0.1", port: 0 })
    const target = auditTarget({
      url: `${server.url}/api`,
      userToken: "stream-two",
      otherUserToken: "-",
      clientToken: "-"
    })
    const stream = await openEventStream(target, "stream-two")
    try {
      await stream.next()
      await fetch(`${server.url}/api/users/v1/preferences/language/`, {
        method: "PUT",
        headers: { ...bearer("stream-two"), "content-type": "application/json" },
        body: '{"timezone":120}'
      })
      expect(JSON.parse((await nextEvent(stream, "live")).data ?? "null")).toMatchObject({
        type: "preferences.updated",
        data: { changes: { timezone: { old: 0, new: 120 } } }
      })
    } finally {
      stream.close()
      await server.close()
    }
  })
})

describe("the events stream mounted in a host's app", () => {
  const mounted = async (listen: () => Promise<{ url: string; close: () => Promise<void> }>) => {
    const server = await listen()
    const target = auditTarget({
      url: `${server.url}/api`,
      userToken: "stream-one",
      otherUserToken: "-",
      clientToken: "-"
    })
    const stream = await openEventStream(target, "stream-one")
    try {
      expect(stream.status).toBe(200)
      expect(stream.headers.get("content-type")).toBe("text/event-stream")
      expect((await stream.next())?.retry).toBe("2000")
      await fetch(`${server.url}/api/users/v1/preferences/language/`, {
        method: "PUT",
        headers: { ...bearer("stream-one"), "content-type": "application/json" },
        body: '{"language":"fr"}'
      })
      let event = await nextEvent(stream, "live")
      // Earlier tests' events of this user come first: the live one is the last.
      while (!(event.data ?? "").includes('"fr"')) event = await nextEvent(stream, "live")
      expect(JSON.parse(event.data ?? "null")).toMatchObject({ type: "preferences.updated" })
    } finally {
      stream.close()
      await server.close()
    }
  }
  const listening = (server: Server): Promise<{ url: string; close: () => Promise<void> }> =>
    new Promise((resolve) =>
      server.listen(0, "127.0.0.1", () =>
        resolve({
          url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
          close: () =>
            new Promise((done) => {
              server.closeAllConnections()
              server.close(() => done())
            })
        })
      )
    )

  it("Koa's accordRouter", () =>
    mounted(() => {
      const app = new Koa()
      app.use(accordRouter({ runtime }).routes())
      return listening(createServer(app.callback()))
    }))

  it("Fastify's accordPlugin", () =>
    mounted(async () => {
      const app = Fastify()
      await app.register(accordPlugin, { prefix: "/api", runtime })
      const url = await app.listen({ port: 0, host: "127.0.0.1" })
      return { url, close: () => app.close() }
    }))

  it("Express's accordExpressRouter", () =>
    mounted(() => {
      const app = express()
      app.use("/api", accordExpressRouter({ runtime }))
      return listening(createServer(app))
    }))
})
