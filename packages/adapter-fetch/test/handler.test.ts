import { fromFetchRequest, makeFetchHandler } from "@accord/adapter-fetch"
import { Seed } from "@accord/domain"
import { headerValue, type HttpRequest, makeHttpHandler } from "@accord/core"
import { ScryptPasswordHasherLive, testScryptCost } from "@accord/node/scrypt"
import { makeMemoryStore } from "@accord/store-memory"
import { afterAll, describe, expect, it, vi } from "@effect/vitest"
import { Layer, ManagedRuntime, Schema } from "effect"

// The handler called as a fetch runtime calls it: a Request in, a Response out, no server.
const seed = Schema.decodeUnknownSync(Seed)({ users: [{ id: "u_h", token: "handler-token" }] })
const runtime = ManagedRuntime.make(Layer.mergeAll(makeMemoryStore(seed), ScryptPasswordHasherLive(testScryptCost)))
afterAll(() => runtime.dispose())

const limit = 64
const handler = makeFetchHandler({ runtime, bodyLimit: limit })
const core = makeHttpHandler({ runtime, bodyLimit: limit })
const preferences = "http://accord.test/api/users/v1/preferences/language/"
const auth = { authorization: "Bearer handler-token" }

/** A body of `chunks` chunks of `size` bytes that records how many it was asked for. */
const countedBody = (size: number, chunks = Number.POSITIVE_INFINITY) => {
  let pulled = 0
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulled += 1
      if (pulled > chunks) controller.close()
      else controller.enqueue(new Uint8Array(size).fill(0x20))
    }
  })
  return { stream, pulled: () => pulled }
}

const put = (body: NonNullable<RequestInit["body"]>, headers: Record<string, string>): Request =>
  new Request(preferences, { method: "PUT", headers: { ...auth, ...headers }, body, duplex: "half" })

describe("makeFetchHandler", () => {
  it("answers with the core's status, headers and body bytes", async () => {
    const request = { method: "GET", path: "/api/health", headers: { "x-request-id": "same-id" } } as const
    const expected = await core(request)
    const response = await handler(new Request("http://accord.test/api/health", { headers: request.headers }))
    expect(response.status).toBe(expected.status)
    expect(Object.fromEntries(response.headers)).toEqual(expected.headers)
    expect(await response.text()).toBe(expected.body)
  })

  it("no body for HEAD and 204: a null body, the core's headers", async () => {
    const head = await handler(new Request("http://accord.test/api/openapi.json", { method: "HEAD" }))
    expect(head.body).toBeNull()
    expect(head.headers.get("content-type")).toBe("application/json; charset=utf-8")
    const options = await handler(new Request(preferences, { method: "OPTIONS" }))
    expect(options.status).toBe(204)
    expect(options.body).toBeNull()
  })

  it("the path is the URL's, still percent-encoded, without query or fragment; header names lower-case", () => {
    const fetchRequest = new Request("http://accord.test/api/payments/v1/payment-methods/p%C3%A9%2F1/?x=%2F#frag", {
      headers: { "X-Request-Id": "abc", Authorization: "Bearer t" }
    })
    const request: HttpRequest = fromFetchRequest(fetchRequest)
    expect(request.path).toBe("/api/payments/v1/payment-methods/p%C3%A9%2F1/")
    expect([headerValue(request.headers, "x-request-id"), headerValue(request.headers, "authorization")]).toEqual([
      "abc",
      "Bearer t"
    ])
    // The request's own Headers, asked for the fields the core reads: never copied into a record.
    expect(request.headers).toBe(fetchRequest.headers)
    expect(fromFetchRequest(new Request("http://accord.test")).path).toBe("/")
    expect(fromFetchRequest(new Request("http://accord.test/api/health"), "/api/./health").path).toBe("/api/./health")
  })

  it("a field sent twice arrives joined, as fetch's Headers give it: a repeated credential is refused", async () => {
    const headers = new Headers([
      ["authorization", "Bearer handler-token"],
      ["authorization", "Bearer handler-token"]
    ])
    const response = await handler(new Request(preferences, { headers }))
    expect(response.status).toBe(401)
    expect(await response.json()).toMatchObject({ code: "invalid_token" })
  })

  it("reads the body the request declares, in any number of chunks", async () => {
    const body = countedBody(8, 3)
    const response = await handler(
      put(body.stream, { "content-type": "application/json", "transfer-encoding": "chunked" })
    )
    // 24 spaces are no JSON value.
    expect(await response.json()).toMatchObject({ code: "invalid_json" })
    const language = '{"language":"de"}'
    const updated = await handler(
      put(language, { "content-type": "application/json", "content-length": String(language.length) })
    )
    expect(await updated.json()).toMatchObject({ language: "de" })
  })

  it("413 as soon as the body passes the limit, having asked for no more than that", async () => {
    const endless = countedBody(10)
    const response = await handler(
      put(endless.stream, { "content-type": "application/json", "transfer-encoding": "chunked" })
    )
    expect(response.status).toBe(413)
    expect(await response.json()).toMatchObject({ code: "payload_too_large" })
    // Seven chunks of 10 bytes pass 64; the stream may have one more queued ahead of the reader.
    expect(endless.pulled()).toBeLessThanOrEqual(8)
  })

  it("a body the core refuses by its headers, or before the credentials, is never read", async () => {
    const declared = countedBody(10)
    const tooLarge = await handler(put(declared.stream, { "content-type": "application/json", "content-length": "65" }))
    expect(tooLarge.status).toBe(413)
    const anonymous = countedBody(10)
    const request = new Request(preferences, {
      method: "PUT",
      headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
      body: anonymous.stream,
      duplex: "half"
    })
    expect((await handler(request)).status).toBe(401)
    // A ReadableStream asks for its first chunk when it is made; nothing after that.
    expect([declared.pulled(), anonymous.pulled()]).toEqual([1, 1])
  })

  it("a stream that breaks, or a body read before: 400 invalid_json, the body could not be read", async () => {
    const broken = new ReadableStream<Uint8Array>({
      pull(controller) {
        controller.error(new Error("connection reset"))
      }
    })
    const failed = await handler(put(broken, { "content-type": "application/json", "transfer-encoding": "chunked" }))
    expect(await failed.json()).toMatchObject({ code: "invalid_json", detail: "The body could not be read." })
    const consumed = put("{}", { "content-type": "application/json", "content-length": "2" })
    await consumed.text()
    const used = await handler(consumed)
    expect(await used.json()).toMatchObject({ code: "invalid_json", detail: "The body could not be read." })
  })

  it("a body of declared length is read whole with arrayBuffer(), its stream never touched", async () => {
    const language = '{"language":"it"}'
    const request = put(language, { "content-type": "application/json", "content-length": String(language.length) })
    const arrayBuffer = vi.spyOn(request, "arrayBuffer")
    Object.defineProperty(request, "body", {
      get: () => {
        throw new Error("the stream was asked for")
      }
    })
    const response = await handler(request)
    expect(await response.json()).toMatchObject({ language: "it" })
    expect(arrayBuffer).toHaveBeenCalledTimes(1)
  })

  it("the limit holds whatever the declared length: a longer body than declared is 413 too", async () => {
    // A Request built in code may carry any Content-Length; a runtime's network request cannot.
    const body = `{"language":"${"x".repeat(80)}"}`
    const response = await handler(put(body, { "content-type": "application/json", "content-length": "10" }))
    expect(response.status).toBe(413)
    expect(await response.json()).toMatchObject({ code: "payload_too_large" })
  })

  it("a declared 1 GiB is TooLarge before a byte is read, even when the reader is called without the core", async () => {
    const huge = countedBody(8)
    const headers = { "content-type": "application/json", "content-length": String(2 ** 30) }
    expect((await handler(put(huge.stream, headers))).status).toBe(413)
    const direct = countedBody(8)
    expect(await fromFetchRequest(put(direct.stream, headers)).readBody?.(limit)).toEqual({ _tag: "TooLarge" })
    // A ReadableStream asks for its first chunk when it is made; nothing after that.
    expect([huge.pulled(), direct.pulled()]).toEqual([1, 1])
  })

  it("a body no header declares is no body (docs/api.md, Precise rules): give a built Request its Content-Length", async () => {
    const undeclared = await handler(put('{"language":"fr"}', { "content-type": "application/json" }))
    expect(await undeclared.json()).toMatchObject({ code: "invalid_json", detail: "A JSON body is required." })
  })
})
