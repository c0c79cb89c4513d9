import type { BodyReadResult } from "@accord/core"

const TOO_LARGE: BodyReadResult = { _tag: "TooLarge" }
const ABORTED: BodyReadResult = { _tag: "Aborted" }
const EMPTY: BodyReadResult = { _tag: "Read", bytes: new Uint8Array(0) }
const DECIMAL = /^[0-9]{1,15}$/

/**
 * A body of declared length, read whole with `arrayBuffer()` (the runtime's own fast path: no stream, no chunk
 * list): TooLarge unread when the length passes the limit, and again if more than the limit arrived anyway (a
 * Request built in code may carry any Content-Length).
 */
const readDeclared = async (request: Request, declared: number, limit: number): Promise<BodyReadResult> => {
  if (declared > limit) return TOO_LARGE
  let buffer: ArrayBuffer
  try {
    buffer = await request.arrayBuffer()
  } catch {
    return ABORTED
  }
  return buffer.byteLength > limit ? TOO_LARGE : { _tag: "Read", bytes: new Uint8Array(buffer) }
}

/**
 * A body of unknown length (chunked), chunk by chunk: TooLarge as soon as one more byte than `limit` arrives (the
 * stream is then cancelled, so that the runtime may drop the rest).
 */
const readStreamed = async (body: ReadableStream<Uint8Array>, limit: number): Promise<BodyReadResult> => {
  const reader = body.getReader()
  const chunks: Array<Uint8Array> = []
  let received = 0
  try {
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      received += chunk.value.byteLength
      if (received > limit) {
        // Not awaited: the answer does not wait for the runtime to settle the cancel, whose failure changes nothing.
        reader.cancel().catch(() => undefined)
        return TOO_LARGE
      }
      chunks.push(chunk.value)
    }
  } catch {
    return ABORTED
  } finally {
    reader.releaseLock()
  }
  if (chunks.length === 1 && chunks[0] !== undefined) return { _tag: "Read", bytes: chunks[0] }
  const bytes = new Uint8Array(received)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return { _tag: "Read", bytes }
}

/**
 * The body, at most `limit` bytes; Aborted when the stream breaks or was read before (a host's body parser in
 * front). With a Content-Length and no Transfer-Encoding, its length is known before a byte is read (the runtime
 * holds the client to it), so it is read whole; otherwise streamed under the limit.
 */
export const readFetchBody = (request: Request, limit: number): Promise<BodyReadResult> => {
  const headers = request.headers
  const length = headers.get("content-length")
  if (length !== null && DECIMAL.test(length) && !headers.has("transfer-encoding")) {
    return readDeclared(request, Number(length), limit)
  }
  if (request.bodyUsed) return Promise.resolve(ABORTED)
  const body = request.body
  if (body === null) return Promise.resolve(EMPTY)
  return body.locked ? Promise.resolve(ABORTED) : readStreamed(body, limit)
}
