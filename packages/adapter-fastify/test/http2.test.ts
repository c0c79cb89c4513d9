import { accordPlugin } from "@accord/adapter-fastify"
import { Seed, StoreAdmin } from "@accord/domain"
import { httpAudits, makeAuditFixture, type AuditTarget } from "@accord/conformance/audits"
import { http2Send, http2SendFields } from "@accord/conformance"
import { loadApiReference } from "@accord/api-reference"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { MemoryStoreLive } from "@accord/store-memory"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, ManagedRuntime, Schema } from "effect"
import Fastify from "fastify"
import { readFileSync } from "node:fs"
import type { AddressInfo } from "node:net"
import { connect, type ClientHttp2Session } from "node:http2"

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
const listen = async (tls: boolean): Promise<{ close: () => Promise<void>; url: string }> => {
  const options = { prefix: "/api", runtime, docs: loadApiReference(), corsOrigins: "*" as const }
  if (tls) {
    const app = Fastify({ http2: true, https: TLS })
    await app.register(accordPlugin, options)
    return opened(app, "https")
  }
  const app = Fastify({ http2: true })
  await app.register(accordPlugin, options)
  return opened(app, "http")
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

    // Every audit but the two that write HTTP/1.1 bytes on a raw socket (two Authorization fields, a transfer
    // coding: neither can be sent in HTTP/2, whose client merges the one and refuses the other), and the one about a
    // standalone server's paths outside the prefix (here the host's, which answers them its own way).
    const runnable = httpAudits.filter(
      (audit) => !audit.needs.includes("wire") && audit.id !== "ACC-routes-outside-prefix-404"
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
