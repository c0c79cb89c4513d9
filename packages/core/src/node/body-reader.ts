import type { Readable } from "node:stream"
import type { BodyReadResult } from "../http/types.js"

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
      const onClose = (): void => settle(stream.readableEnded ? { _tag: "Read", bytes: Buffer.concat(chunks, received) } : { _tag: "Aborted" })
      stream.on("data", onData)
      stream.once("end", onEnd)
      stream.once("close", onClose)
      stream.once("error", onError)
      // A stream paused explicitly (pause()) does not start flowing when a 'data' listener is added.
      stream.resume()
    })
