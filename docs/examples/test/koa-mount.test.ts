import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from "jose"
import { once } from "node:events"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"

/** The identity provider, on loopback: it publishes its public key at a JWKS URL and signs tokens with the private one. */
let provider: Server
let privateKey: CryptoKey
let server: Server
let base = ""

const issue = (sub: string, key: CryptoKey = privateKey) =>
  new SignJWT({})
    .setProtectedHeader({ alg: "ES256", kid: "k1" })
    .setSubject(sub)
    .setIssuer("https://login.example.com/")
    .setAudience("accord-api")
    .setExpirationTime("5m")
    .sign(key)

beforeAll(async () => {
  const pair = await generateKeyPair("ES256")
  privateKey = pair.privateKey
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256" }] })
  provider = createServer((_request, response) =>
    response.writeHead(200, { "content-type": "application/json" }).end(jwks)
  )
  provider.listen(0, "127.0.0.1")
  await once(provider, "listening")
  process.env.JWKS_URL = `http://127.0.0.1:${(provider.address() as AddressInfo).port}/.well-known/jwks.json`
  process.env.PORT = "0"
  server = (await import("../koa-mount.js")).server
  if (!server.listening) await once(server, "listening")
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((resolve) => server.close(() => resolve()))
  provider.closeAllConnections()
  await new Promise<void>((resolve) => provider.close(() => resolve()))
})

describe("docs/examples/koa-mount.ts", () => {
  it("serves the host's route and Accord's, with tokens the provider's key signed", async () => {
    expect(await (await fetch(`${base}/hello`)).json()).toEqual({ hello: "world" })
    const response = await fetch(`${base}/api/users/v1/preferences/language/`, {
      method: "PUT",
      headers: { authorization: `Bearer ${await issue("u_7")}`, "content-type": "application/json" },
      body: '{"language":"fr-ca"}'
    })
    expect(response.status).toBe(200)
    expect(await response.json()).toMatchObject({ language: "fr-CA" })
  })

  it("refuses a token signed by another key with 401 invalid_token", async () => {
    const stranger = (await generateKeyPair("ES256")).privateKey
    const response = await fetch(`${base}/api/users/v1/preferences/language/`, {
      headers: { authorization: `Bearer ${await issue("u_7", stranger)}` }
    })
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({ code: "invalid_token" })
  })

  it("keeps Accord's 404 under /api and Koa's outside it", async () => {
    const inside = await fetch(`${base}/api/nope`)
    expect(inside.headers.get("content-type")).toBe("application/problem+json; charset=utf-8")
    const outside = await fetch(`${base}/nope`)
    expect(outside.status).toBe(404)
    expect(await outside.text()).toBe("Not Found")
  })
})
