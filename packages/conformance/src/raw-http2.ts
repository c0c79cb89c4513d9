import { constants, type ClientHttp2Session, type ClientHttp2Stream } from "node:http2"
import { MAX_RESPONSE_BYTES, tooLarge, type RawRequest, type RawResponse } from "./raw-http.js"

/**
 * The complete response on `stream`, within `timeoutMs`, its body up to `MAX_RESPONSE_BYTES`, failed at once when
 * `signal` aborts; a stream reset after the response began resolves with what came. The stream is closed either way.
 */
const responseOf = (
  stream: ClientHttp2Stream,
  label: string,
  timeoutMs: number,
  signal?: AbortSignal
): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      stream.close()
      return reject(signal.reason)
    }
    let settled = false
    const finish = (outcome: { ok: RawResponse } | { error: unknown }): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener("abort", abort)
      stream.close()
      if ("ok" in outcome) resolve(outcome.ok)
      else reject(outcome.error)
    }
    const timer = setTimeout(() => finish({ error: new Error(`${label}: no complete response`) }), timeoutMs)
    const abort = (): void => finish({ error: signal?.reason })
    signal?.addEventListener("abort", abort, { once: true })
    const parts: Array<Buffer> = []
    let bodyBytes = 0
    let status = 0
    const responseHeaders: Record<string, string> = {}
    const response = (): RawResponse => ({ status, headers: responseHeaders, body: Buffer.concat(parts) })
    stream.on("response", (received) => {
      status = Number(received[constants.HTTP2_HEADER_STATUS])
      for (const [name, value] of Object.entries(received))
        if (!name.startsWith(":") && value !== undefined)
          responseHeaders[name] = Array.isArray(value) ? value.join(", ") : String(value)
    })
    stream.on("data", (part: Buffer) => {
      bodyBytes += part.length
      if (bodyBytes > MAX_RESPONSE_BYTES) finish({ error: tooLarge(label) })
      else parts.push(part)
    })
    stream.on("end", () => finish({ ok: response() }))
    // A server that answers before it read the body may reset the stream: what came before the reset counts.
    stream.on("error", (error) => finish(status !== 0 ? { ok: response() } : { error }))
  })

/**
 * `RawRequest` over one HTTP/2 session: `body` with its Content-Length as `RawRequest` says, `chunks` as DATA frames
 * with no length at all (HTTP/2's counterpart of chunked), `declaredLength` announced and never completed; the same
 * deadline, body bound (`MAX_RESPONSE_BYTES`) and `signal` as `send`.
 */
export const http2Send =
  (session: ClientHttp2Session) =>
  (request: RawRequest): Promise<RawResponse> => {
    if (request.signal?.aborted === true) return Promise.reject(request.signal.reason)
    const headers: Record<string, string> = {
      [constants.HTTP2_HEADER_METHOD]: request.method,
      [constants.HTTP2_HEADER_PATH]: request.path
    }
    // Connection-specific fields are not HTTP/2 (RFC 9113, 8.2.2): Node's client refuses them.
    for (const [name, value] of Object.entries(request.headers ?? {}))
      if (!["connection", "transfer-encoding", "keep-alive"].includes(name.toLowerCase()))
        headers[name.toLowerCase()] = value
    const body = request.body === undefined ? undefined : Buffer.from(request.body)
    if (body !== undefined) headers["content-length"] = String(request.declaredLength ?? body.length)
    const bodyless = body === undefined && request.chunks === undefined
    const stream = session.request(headers, { endStream: bodyless })
    const response = responseOf(stream, `${request.method} ${request.path}`, request.timeoutMs ?? 5000, request.signal)
    if (request.chunks !== undefined) {
      for (const chunk of request.chunks) if (chunk.length > 0) stream.write(Buffer.from(chunk))
      stream.end()
    } else if (body !== undefined) {
      if (request.declaredLength === undefined) stream.end(body)
      else stream.write(body)
    }
    return response
  }

/**
 * A request without a body whose header fields go as given, lower-case names: a list sends one field per member (two
 * Origin fields, say, which `RawRequest` cannot express and the server's Node joins into one value).
 */
export const http2SendFields =
  (session: ClientHttp2Session) =>
  (
    method: string,
    path: string,
    fields: Readonly<Record<string, string | ReadonlyArray<string>>>
  ): Promise<RawResponse> => {
    const headers: Record<string, string | Array<string>> = {
      [constants.HTTP2_HEADER_METHOD]: method,
      [constants.HTTP2_HEADER_PATH]: path
    }
    for (const [name, value] of Object.entries(fields)) headers[name] = typeof value === "string" ? value : [...value]
    return responseOf(session.request(headers, { endStream: true }), `${method} ${path}`, 5000)
  }
