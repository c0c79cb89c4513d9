import { constants, type ClientHttp2Session } from "node:http2"
import { MAX_RESPONSE_BYTES, tooLarge, type RawRequest, type RawResponse } from "./raw-http.js"

/**
 * `RawRequest` over one HTTP/2 session: `body` with its Content-Length as `RawRequest` says, `chunks` as DATA frames
 * with no length at all (HTTP/2's counterpart of chunked), `declaredLength` announced and never completed; the same
 * deadline, body bound (`MAX_RESPONSE_BYTES`) and `signal` as `send`.
 */
export const http2Send =
  (session: ClientHttp2Session) =>
  (request: RawRequest): Promise<RawResponse> =>
    new Promise((resolve, reject) => {
      if (request.signal?.aborted === true) return reject(request.signal.reason)
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
      const label = `${request.method} ${request.path}`
      let settled = false
      const finish = (outcome: { ok: RawResponse } | { error: unknown }): void => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        request.signal?.removeEventListener("abort", abort)
        stream.close()
        if ("ok" in outcome) resolve(outcome.ok)
        else reject(outcome.error)
      }
      const timer = setTimeout(
        () => finish({ error: new Error(`${label}: no complete response`) }),
        request.timeoutMs ?? 5000
      )
      const abort = (): void => finish({ error: request.signal?.reason })
      request.signal?.addEventListener("abort", abort, { once: true })
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
      if (request.chunks !== undefined) {
        for (const chunk of request.chunks) if (chunk.length > 0) stream.write(Buffer.from(chunk))
        stream.end()
      } else if (body !== undefined) {
        if (request.declaredLength === undefined) stream.end(body)
        else stream.write(body)
      }
    })
