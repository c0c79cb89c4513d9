import { bodyFullyReceived, nodeBodyNow, nodeBodyReader, requestPath, responsePayload } from "@accord/node/bridge"
import type { BodyReadResult } from "@accord/core"
import { describe, expect, it } from "@effect/vitest"
import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import { connect } from "node:net"
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

interface Seen {
  readonly now: BodyReadResult | undefined
  readonly fullyReceived: boolean
}

/** Resolves once `done()` is true, checking every 5 ms: the test's own time-out is the only bound. */
const until = async (done: () => boolean): Promise<void> => {
  while (!done()) await new Promise((resolve) => setTimeout(resolve, 5))
}

/**
 * Sends raw HTTP on one connection to a server that looks for the body a microtask after the request arrived, as the
 * Node adapters do; resolves with what it saw per request and the raw answers once `answerCount` answers came. Each
 * string is one write, and a write after the first waits until the server has seen a request: the rest of a body
 * then certainly arrives after the request was dispatched, however busy the machine.
 */
const exchange = async (
  writes: ReadonlyArray<string>,
  answerCount: number,
  consume?: (request: IncomingMessage) => void
): Promise<{ seen: Array<Seen>; answers: string }> => {
  const seen: Array<Seen> = []
  const server = createServer((request, response) => {
    consume?.(request)
    void Promise.resolve().then(() => {
      seen.push({ now: nodeBodyNow(request, request)(100), fullyReceived: bodyFullyReceived(request) })
      response.end("ok")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const socket = connect((server.address() as AddressInfo).port, "127.0.0.1")
  let answers = ""
  socket.on("data", (chunk: Buffer) => (answers += chunk.toString("latin1")))
  for (const [index, write] of writes.entries()) {
    if (index > 0) await until(() => seen.length > 0)
    socket.write(write)
  }
  await until(() => (answers.match(/HTTP\/1\.1 /g) ?? []).length >= answerCount)
  socket.destroy()
  await new Promise((resolve) => server.close(resolve))
  return { seen, answers }
}

const put = (body: string): string =>
  `PUT /x HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`

describe("nodeBodyNow", () => {
  it("takes a body that came with its headers without waiting, and the connection stays usable", async () => {
    const { seen, answers } = await exchange([put('{"a":1}') + put('{"b":2}')], 2)
    expect(seen.map(({ now }) => now?._tag === "Read" && text(now.bytes))).toEqual(['{"a":1}', '{"b":2}'])
    expect(seen.every(({ fullyReceived }) => fullyReceived)).toBe(true)
    // Both answered on the one connection, neither with Connection: close.
    expect(answers.match(/HTTP\/1\.1 200/g)).toHaveLength(2)
    expect(answers).not.toMatch(/connection: close/i)
  })

  it("is undefined while the body is still on its way, and for a chunked body", async () => {
    const split = put('{"a":1}')
    const late = await exchange([split.slice(0, -3), split.slice(-3)], 1)
    expect(late.seen).toEqual([{ now: undefined, fullyReceived: false }])
    const chunked = await exchange(
      ["PUT /x HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"],
      1
    )
    expect(chunked.seen.map(({ now }) => now)).toEqual([undefined])
  })

  it("leaves alone a body larger than the limit, one someone else is reading, and one read as text", async () => {
    const large = await exchange([put("x".repeat(101))], 1)
    expect(large.seen.map(({ now }) => now)).toEqual([undefined])
    const taken = await exchange([put('{"a":1}')], 1, (request) => request.on("data", () => {}))
    expect(taken.seen.map(({ now }) => now)).toEqual([undefined])
    const decoded = await exchange([put('{"a":1}')], 1, (request) => request.setEncoding("utf8"))
    expect(decoded.seen.map(({ now }) => now)).toEqual([undefined])
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
