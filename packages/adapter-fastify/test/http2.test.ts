import { accordPlugin, type AccordPluginOptions } from "@accord/adapter-fastify"
import { Seed, StoreAdmin } from "@accord/domain"
import { eventStreamAudits, httpAudits, makeAuditFixture, type AuditTarget } from "@accord/conformance/audits"
import { http2Send, http2SendFields } from "@accord/conformance"
import { loadApiReference } from "@accord/api-reference"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { MemoryStoreLive } from "@accord/store-memory"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import Fastify from "fastify"
import { readFileSync } from "node:fs"
import type { AddressInfo } from "node:net"
import {
  connect,
  constants,
  type ClientHttp2Session,
  type IncomingHttpHeaders,
  type IncomingHttpStatusHeader
} from "node:http2"

// The Fastify plugin mounted in `Fastify({ http2: true })`, cleartext (h2c) and over TLS, under the shared audits
// (docs/SECURITY.md, item 28), with CORS on for any origin (the CORS audits, items 37 and 38). Under HTTP/2 the end of
// the stream, not Content-Length, says whether a body came (RFC 9113, 8.1): Node's client, like most, sends a body
// without Content-Length.

/** A self-signed certificate for 127.0.0.1 and localhost, made for these tests only (openssl, 100 years). */
const TLS = {
  key: readFileSync(new URL("fixtures/test-only-key.pem", import.meta.url)),
  cert: readFileSync(new URL("fixtures/test-only-cert.pem", import.meta.url))
}

const runtime = ManagedRuntime.make(Layer.mergeAll(MemoryStoreLive, ScryptPasswordHasherLive(testScryptCost)))
const fixture = makeAuditFixture()

afterAll(() => runtime.dispose())

/** A listening host app's URL (scheme, 127.0.0.1, its port) and its close. */
const opened = async (
  app: {
    readonly listen: (options: { host: string; port: number }) => Promise<string>
    readonly server: { address: () => string | AddressInfo | null }
    readonly close: () => PromiseLike<unknown>
  },
  scheme: "http" | "https"
): Promise<{ close: () => Promise<void>; url: string }> => {
  await app.listen({ host: "127.0.0.1", port: 0 })
  const address = app.server.address()
  const port = typeof address === "object" && address !== null ? address.port : 0
  return { close: async () => void (await app.close()), url: `${scheme}://127.0.0.1:${port}` }
}

/** The host app: plain `Fastify({ http2: true })`, with `https` for TLS; the plugin registered as the README shows. */
const listen = async (
  tls: boolean,
  more: Omit<AccordPluginOptions, "runtime"> = {}
): Promise<{ close: () => Promise<void>; url: string }> => {
  const options = { prefix: "/api", runtime, docs: loadApiReference(), corsOrigins: "*" as const, ...more }
  if (tls) {
    const app = Fastify({ http2: true, https: TLS })
    await app.register(accordPlugin, options)
    return opened(app, "https")
  }
  const app = Fastify({ http2: true })
  await app.register(accordPlugin, options)
  return opened(app, "http")
}

/** Opens the events stream on `client`: its head, and its body's text as it arrives, chunk by chunk. */
const openH2Stream = async (client: ClientHttp2Session, authorization: string) => {
  const stream = client.request({ ":path": "/api/users/v1/events/", accept: "text/event-stream", authorization })
  const head = await new Promise<IncomingHttpHeaders & IncomingHttpStatusHeader>((resolve, reject) => {
    stream.once("response", resolve)
    stream.once("error", reject)
  })
  let text = ""
  const waiters: Array<() => void> = []
  stream.setEncoding("utf8").on("data", (chunk: string) => {
    text += chunk
    for (const wake of waiters.splice(0)) wake()
  })
  const ended = new Promise<void>((resolve, reject) => {
    stream.once("end", resolve)
    stream.once("error", reject)
  })
  /** Resolves once the text read so far holds `part` (the test's timeout bounds the wait). */
  const until = async (part: string): Promise<string> => {
    while (!text.includes(part)) await new Promise<void>((resolve) => waiters.push(resolve))
    return text
  }
  return { stream, head, until, ended }
}

beforeAll(async () => {
  const seed = Schema.decodeUnknownSync(Seed)(fixture.seed)
  await runtime.runPromise(Effect.flatMap(StoreAdmin, (admin) => admin.loadSeed(seed)))
})

for (const tls of [false, true]) {
  describe(`accordPlugin in Fastify({ http2: true }) ${tls ? "over TLS" : "cleartext (h2c)"}`, () => {
    let app: { close: () => Promise<void> } | undefined
    let session: ClientHttp2Session | undefined
    let target: AuditTarget | undefined

    beforeAll(async () => {
      const started = await listen(tls)
      app = started
      session = connect(started.url, tls ? { ca: TLS.cert } : {})
      // Not `exchange`: the wire audits write HTTP/1.1 bytes on a socket, which an HTTP/2 server does not read.
      target = { ...fixture.target(`${started.url}/api`), send: http2Send(session), exchange: undefined }
    })
    afterAll(async () => {
      session?.close()
      await app?.close()
    })

    it("a PUT whose body comes without Content-Length is read (the end of the stream says there is one)", async () => {
      if (target === undefined) throw new Error("not started")
      const put = await target.send({
        method: "PUT",
        path: target.paths.preferences,
        headers: { authorization: `Bearer ${target.userToken}`, "content-type": "application/json" },
        chunks: ['{"language":', '"fr"}']
      })
      expect(put.status).toBe(200)
      expect(JSON.parse(put.body.toString())).toMatchObject({ language: "fr" })
      const reset = await target.send({
        method: "PUT",
        path: target.paths.preferences,
        headers: { authorization: `Bearer ${target.userToken}`, "content-type": "application/json" },
        chunks: ['{"language":"en"}']
      })
      expect(reset.status).toBe(200)
      // No DATA at all (END_STREAM on the headers): no body, where one is required.
      const none = await target.send({
        method: "PUT",
        path: target.paths.preferences,
        headers: { authorization: `Bearer ${target.userToken}`, "content-type": "application/json" }
      })
      expect(none.status).toBe(400)
      expect(JSON.parse(none.body.toString())).toMatchObject({ code: "invalid_json" })
    })

    // Two Origin fields, which Node's server joins into one value ("a, b") as HTTP/1.1's does two lines.
    it("two Origin fields get no CORS headers, and vary on Origin (docs/SECURITY.md, item 38)", async () => {
      if (session === undefined) throw new Error("not started")
      const sendFields = http2SendFields(session)
      const origin = fixture.corsOrigin
      expect((await sendFields("GET", "/api/health", { origin })).headers["access-control-allow-origin"]).toBe(origin)
      for (const origins of [
        [origin, origin],
        [origin, "https://other.example"]
      ]) {
        const res = await sendFields("GET", "/api/health", { origin: origins })
        expect(res.status).toBe(200)
        expect(res.headers["access-control-allow-origin"]).toBeUndefined()
        expect(res.headers["vary"]).toBe("Origin")
      }
    })

    it("the events stream: the head, retry, a live event while it stays open; ended by the drain, or by the client's cancel, without error", async () => {
      if (target === undefined || session === undefined) throw new Error("not started")
      let drain = (): void => {}
      const drainStarted = new Promise<void>((resolve) => (drain = resolve))
      const opened: Array<number> = []
      const internalErrors: Array<unknown> = []
      const host = await listen(tls, {
        drainStarted,
        eventStreams: { onOpenChange: (delta) => opened.push(delta) },
        onInternalError: (_requestId, cause) => internalErrors.push(cause)
      })
      const client = connect(host.url, tls ? { ca: TLS.cert } : {})
      try {
        const user = `Bearer ${target.userToken}`
        const drained = await openH2Stream(client, user)
        expect(drained.head[":status"]).toBe(200)
        expect(drained.head["content-type"]).toBe("text/event-stream")
        expect(drained.head["cache-control"]).toBe("no-store")
        expect(drained.head["x-accel-buffering"]).toBe("no")
        expect(drained.head["content-length"]).toBeUndefined()
        expect(await drained.until("\n\n")).toMatch(/^retry: 2000\n\n/)
        const put = await http2Send(client)({
          method: "PUT",
          path: target.paths.preferences,
          headers: { authorization: user, "content-type": "application/json" },
          body: `{"timezone":${tls ? 165 : 150}}`
        })
        expect(put.status).toBe(200)
        const live = await drained.until(`"new":${tls ? 165 : 150}`)
        expect(live.split("\n\n").find((block) => block.includes(`"new":${tls ? 165 : 150}`))).toMatch(
          /^id: [0-9a-f-]{36}\ndata: \{.*"type":"preferences\.updated".*\}$/
        )
        const cancelled = await openH2Stream(client, user)
        await cancelled.until("retry: 2000\n\n")
        expect(opened).toEqual([1, 1])
        cancelled.stream.close(constants.NGHTTP2_CANCEL)
        while (opened.length < 3) await new Promise((resolve) => setTimeout(resolve, 5))
        expect(drained.stream.closed).toBe(false)
        drain()
        await drained.ended
        await new Promise((resolve) => drained.stream.once("close", resolve))
        expect(drained.stream.rstCode).toBe(constants.NGHTTP2_NO_ERROR)
        expect(opened).toEqual([1, 1, -1, -1])
        expect(internalErrors).toEqual([])
      } finally {
        client.close()
        await host.close()
      }
    })

    // Every audit but the two that write HTTP/1.1 bytes on a raw socket (two Authorization fields, a transfer
    // coding: neither can be sent in HTTP/2, whose client merges the one and refuses the other), the one about a
    // standalone server's paths outside the prefix (here the host's, which answers them its own way), and the events
    // stream's, which read with Node's fetch, an HTTP/1.1 client this server does not answer: the stream over HTTP/2
    // is the test above.
    const runnable = httpAudits.filter(
      (audit) =>
        !audit.needs.includes("wire") &&
        audit.id !== "ACC-routes-outside-prefix-404" &&
        !eventStreamAudits.includes(audit)
    )
    for (const audit of runnable) {
      it(
        `${audit.id}: ${audit.title}`,
        async () => {
          if (target === undefined) throw new Error("not started")
          await audit.run(target)
        },
        audit.timeoutMs
      )
    }
  })
}
