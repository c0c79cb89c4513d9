import { fetchSend, MAX_RESPONSE_BYTES, type Fetch } from "@accord/conformance"
import { describe, expect, it } from "@effect/vitest"

// `fetchSend`: the audits' requests through any fetch, bounded as `send` is (docs/SECURITY.md, items 31 and 32): a
// target we do not run cannot make it wait past its deadline or hold more than MAX_RESPONSE_BYTES.

const BASE = "http://accord.test/api"

/** A fetch that records the requests it is given and answers each with `answer`. */
const recording = (answer: () => Promise<Response>) => {
  const seen: Array<Request> = []
  const fetch: Fetch = (request) => {
    seen.push(request)
    return answer()
  }
  return { seen, fetch }
}

describe("fetchSend", () => {
  it("sends the path as given against the URL's origin, the body as bytes with its Content-Length, and no redirect", async () => {
    const { seen, fetch } = recording(async () => new Response("{}", { status: 201, headers: { "X-Answer": "1" } }))
    const res = await fetchSend(
      BASE,
      fetch
    )({
      method: "PUT",
      path: "/api/payments/v1/payment-methods/pm%201/?x=1",
      headers: { Authorization: "Bearer t" },
      body: '{"a":"é"}'
    })
    expect(res).toEqual({
      status: 201,
      headers: { "content-type": "text/plain;charset=UTF-8", "x-answer": "1" },
      body: Buffer.from("{}")
    })
    const [request] = seen
    expect(request?.url).toBe("http://accord.test/api/payments/v1/payment-methods/pm%201/?x=1")
    expect(request?.redirect).toBe("manual")
    // A string body would have been given `text/plain;charset=UTF-8`: the audit sent no Content-Type.
    expect([...(request?.headers ?? [])]).toEqual([
      ["authorization", "Bearer t"],
      ["content-length", String(Buffer.byteLength('{"a":"é"}'))]
    ])
    expect(Buffer.from((await request?.arrayBuffer()) ?? new ArrayBuffer(0)).toString()).toBe('{"a":"é"}')
  })

  it.each([
    [{ chunks: ["{", "}"] }, "chunk boundaries"],
    [{ body: "{", declaredLength: 100 }, "a declared length never sent"]
  ] as const)("refuses what a fetch cannot express, with the need it takes: %o", async (parts, what) => {
    const { seen, fetch } = recording(async () => new Response(null))
    await expect(fetchSend(BASE, fetch)({ method: "PUT", path: "/api/x", ...parts })).rejects.toThrow(
      `PUT /api/x: a fetch cannot send ${what} (the raw-http need)`
    )
    await expect(fetchSend(BASE, fetch)({ method: "GET", path: "/api/x", body: "x" })).rejects.toThrow(
      "a fetch cannot send a body on GET"
    )
    expect(seen).toEqual([])
  })

  it("fails at its deadline when the fetch never answers, and aborts the fetch's signal", async () => {
    const { seen, fetch } = recording(() => new Promise<Response>(() => undefined))
    await expect(fetchSend(BASE, fetch)({ method: "GET", path: "/api/health", timeoutMs: 50 })).rejects.toThrow(
      "GET /api/health: no complete response within 50 ms"
    )
    expect(seen[0]?.signal.aborted).toBe(true)
  })

  it("fails at its deadline when the body trickles without end", async () => {
    const endless = new ReadableStream<Uint8Array>({
      pull: (controller) =>
        new Promise((resolve) => setTimeout(() => resolve(controller.enqueue(new Uint8Array(1))), 5))
    })
    const { fetch } = recording(async () => new Response(endless))
    await expect(fetchSend(BASE, fetch)({ method: "GET", path: "/api/health", timeoutMs: 100 })).rejects.toThrow(
      "no complete response within 100 ms"
    )
  })

  it("stops reading a body past MAX_RESPONSE_BYTES and cancels it", async () => {
    let pulled = 0
    let cancelled = false
    const huge = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        pulled += 1
        controller.enqueue(new Uint8Array(1024 * 1024))
      },
      cancel: () => {
        cancelled = true
      }
    })
    const { fetch } = recording(async () => new Response(huge))
    await expect(fetchSend(BASE, fetch)({ method: "GET", path: "/api/docs" })).rejects.toThrow(
      `GET /api/docs: the response is larger than ${MAX_RESPONSE_BYTES} bytes`
    )
    expect(pulled).toBeLessThan(MAX_RESPONSE_BYTES / (1024 * 1024) + 3)
    expect(cancelled).toBe(true)
  })

  it("fails at once when the audit's signal aborts", async () => {
    const controller = new AbortController()
    const { fetch } = recording(() => new Promise<Response>(() => undefined))
    const sent = fetchSend(BASE, fetch)({ method: "GET", path: "/api/health", signal: controller.signal })
    controller.abort(new Error("timed out after 10 ms"))
    await expect(sent).rejects.toThrow("timed out after 10 ms")
  })
})
