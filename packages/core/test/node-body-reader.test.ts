import { nodeBodyReader, requestPath, responsePayload } from "@accord/core/node"
import { describe, expect, it } from "@effect/vitest"
import { PassThrough } from "node:stream"

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString("utf8")

describe("nodeBodyReader", () => {
  it("reads the whole body when it fits, up to exactly the limit", async () => {
    const stream = new PassThrough()
    const reading = nodeBodyReader(stream)(10)
    stream.write("01234")
    stream.end("56789")
    const result = await reading
    expect(result._tag).toBe("Read")
    if (result._tag === "Read") expect(text(result.bytes)).toBe("0123456789")
  })

  it("an empty body is zero bytes read", async () => {
    const stream = new PassThrough()
    const reading = nodeBodyReader(stream)(10)
    stream.end()
    expect(await reading).toEqual({ _tag: "Read", bytes: Buffer.alloc(0) })
  })

  it("answers TooLarge as soon as one byte more than the limit arrives, then reads no further", async () => {
    const stream = new PassThrough()
    const reading = nodeBodyReader(stream)(10)
    stream.write("0123456789")
    stream.write("x")
    expect(await reading).toEqual({ _tag: "TooLarge" })
    expect(stream.isPaused()).toBe(true)
    // Whatever comes later stays in the stream: nobody reads it.
    stream.write("more")
    expect(stream.readableLength).toBeGreaterThanOrEqual(4)
  })

  it("counts bytes, not characters", async () => {
    const stream = new PassThrough()
    const reading = nodeBodyReader(stream)(3)
    stream.end("éé") // four bytes
    expect(await reading).toEqual({ _tag: "TooLarge" })
  })

  it("a stream that breaks or closes early is Aborted, and a later error does not go unhandled", async () => {
    const broken = new PassThrough()
    const reading = nodeBodyReader(broken)(10)
    broken.write("01")
    broken.destroy(new Error("connection reset"))
    expect(await reading).toEqual({ _tag: "Aborted" })

    const cut = new PassThrough()
    const cutReading = nodeBodyReader(cut)(10)
    cut.write("01")
    cut.destroy()
    expect(await cutReading).toEqual({ _tag: "Aborted" })

    const refused = new PassThrough()
    const refusedReading = nodeBodyReader(refused)(1)
    refused.write("01")
    expect(await refusedReading).toEqual({ _tag: "TooLarge" })
    refused.destroy(new Error("after we stopped listening"))
    await new Promise((resolve) => setImmediate(resolve))
  })

  it("a body someone else already consumed is Aborted, not an empty body", async () => {
    const stream = new PassThrough()
    stream.end("{}")
    stream.resume()
    await new Promise((resolve) => stream.once("end", resolve))
    expect(await nodeBodyReader(stream)(10)).toEqual({ _tag: "Aborted" })
  })

  it("reads a stream that was paused explicitly", async () => {
    const stream = new PassThrough()
    stream.pause()
    stream.end("{}")
    const result = await nodeBodyReader(stream)(10)
    expect(result._tag === "Read" && text(result.bytes)).toBe("{}")
  })
})

describe("requestPath", () => {
  it.each([
    ["/api/health", "/api/health"],
    ["/api/health?x=1&y=2", "/api/health"],
    ["/api/payments/v1/payment-methods/%7A%zz/", "/api/payments/v1/payment-methods/%7A%zz/"],
    ["/api/health#fragment", "/api/health"],
    ["http://example.com:8080/api/health?x", "/api/health"],
    ["HTTP://example.com", "/"],
    ["*", "*"]
  ])("%s -> %s", (target, path) => {
    expect(requestPath(target)).toBe(path)
  })
})

describe("responsePayload", () => {
  it("is the text itself for text, the same bytes for a view into a larger buffer, nothing for no body", () => {
    expect(responsePayload("é")).toBe("é")
    const backing = new Uint8Array([1, 2, 3, 4, 5])
    expect(responsePayload(backing.subarray(1, 3))).toEqual(Buffer.from([2, 3]))
    expect(responsePayload(undefined)).toBeUndefined()
  })
})
