import type { IncomingMessage } from "node:http"
import type { Readable } from "node:stream"
import type { BodyReadResult } from "@accord/core"

const noop = (): void => {}

/**
 * The `readBody` of an `HttpRequest` over a Node stream: collects at most `limit` bytes and answers TooLarge as soon
 * as one more arrives. After TooLarge the rest is left unread; the adapter then closes the connection once it has
 * answered (see `closeIfBodyUnread`), so an endless upload costs nothing.
 */
export const nodeBodyReader =
  (stream: Readable) =>
  (limit: number): Promise<BodyReadResult> =>
    new Promise((resolve) => {
      // Ended before we read it: someone else (e.g. a host's body parser mounted in front) consumed it.
      if (stream.readableEnded || stream.destroyed) return resolve({ _tag: "Aborted" })
      const chunks: Array<Buffer> = []
      let received = 0
      const settle = (result: BodyReadResult): void => {
        stream.off("data", onData)
        stream.off("end", onEnd)
        stream.off("close", onClose)
        stream.off("error", onError)
        // A stream that breaks after we stopped listening must not crash the process with an unhandled 'error'.
        stream.on("error", noop)
        resolve(result)
      }
      const onData = (chunk: Buffer | string): void => {
        const bytes = typeof chunk === "string" ? Buffer.from(chunk) : chunk
        received += bytes.length
        if (received > limit) {
          stream.pause()
          settle({ _tag: "TooLarge" })
          return
        }
        chunks.push(bytes)
      }
      const onEnd = (): void => settle({ _tag: "Read", bytes: Buffer.concat(chunks, received) })
      const onError = (): void => settle({ _tag: "Aborted" })
      const onClose = (): void =>
        settle(stream.readableEnded ? { _tag: "Read", bytes: Buffer.concat(chunks, received) } : { _tag: "Aborted" })
      stream.on("data", onData)
      stream.once("end", onEnd)
      stream.once("close", onClose)
      stream.once("error", onError)
      // A stream paused explicitly (pause()) does not start flowing when a 'data' listener is added.
      stream.resume()
    })

/** Requests whose body `nodeBodyNow` took whole, possibly before Node marked them complete. */
const takenWhole = new WeakSet<IncomingMessage>()

/**
 * The body of a Node request without waiting, when all the bytes its Content-Length declares are already buffered (a
 * small body comes in the packet that brought the headers) and nobody else has started reading it; otherwise
 * undefined, and `nodeBodyReader` waits for it. Chunked bodies always wait.
 */
export const takeBodyNow = (request: IncomingMessage, stream: Readable, limit: number): BodyReadResult | undefined => {
  if (stream !== request || request.readableFlowing === true || request.readableEnded || request.destroyed)
    return undefined
  // A host that set an encoding gets strings from read(); leave such a stream to the reader that handles them.
  if (request.readableEncoding !== null) return undefined
  const declared = request.headers["content-length"]
  if (declared === undefined || request.headers["transfer-encoding"] !== undefined) return undefined
  const length = Number(declared)
  if (length > limit || request.readableLength !== length) return undefined
  const chunk: unknown = request.read(length)
  if (!(chunk instanceof Uint8Array)) return undefined
  takenWhole.add(request)
  return { _tag: "Read", bytes: chunk }
}

/** The `readBodyNow` of an `HttpRequest` over a Node request (`takeBodyNow`). */
export const nodeBodyNow =
  (request: IncomingMessage, stream: Readable) =>
  (limit: number): BodyReadResult | undefined =>
    takeBodyNow(request, stream, limit)

/** Requests whose body did not arrive in time: the server answered 408 itself (`answerClientError`). */
const timedOut = new WeakSet<IncomingMessage>()

/** Called by the server as it answers 408 for a request whose body is being read, before it closes the connection. */
export const markTimedOut = (request: IncomingMessage): void => void timedOut.add(request)

/** True when the server answered 408 for this request while its body was awaited (see `markTimedOut`). */
export const answeredTimeout = (request: IncomingMessage): boolean => timedOut.has(request)

/**
 * `nodeBodyReader` for a request: a read that breaks because the server answered 408 reports TimedOut, so the
 * request's one log line carries the 408 the client got, not the 400 of a broken body (docs/SECURITY.md, item 16).
 */
export const nodeRequestBodyReader = (request: IncomingMessage, stream: Readable) => {
  const read = nodeBodyReader(stream)
  return (limit: number): Promise<BodyReadResult> =>
    read(limit).then((result) => (result._tag === "Aborted" && timedOut.has(request) ? { _tag: "TimedOut" } : result))
}

/** True once the request's body is no longer on the connection: Node has parsed all of it, or it was taken whole. */
export const bodyFullyReceived = (request: IncomingMessage): boolean => request.complete || takenWhole.has(request)
