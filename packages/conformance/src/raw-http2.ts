import { constants, type ClientHttp2Session } from "node:http2"
import type { RawRequest, RawResponse } from "./raw-http.js"

/**
 * `RawRequest` over one HTTP/2 session: `body` with its Content-Length as `RawRequest` says, `chunks` as DATA frames
 * with no length at all (HTTP/2's counterpart of chunked), `declaredLength` announced and never completed.
 */
export const http2Send =
  (session: ClientHttp2Session) =>
  (request: RawRequest): Promise<RawResponse> =>
    new Promise((resolve, reject) => {
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
      const timer = setTimeout(() => {
        stream.close()
        reject(new Error(`${request.method} ${request.path}: no complete response`))
      }, request.timeoutMs ?? 5000)
      const parts: Array<Buffer> = []
      let status = 0
      const responseHeaders: Record<string, string> = {}
      stream.on("response", (received) => {
        status = Number(received[constants.HTTP2_HEADER_STATUS])
        for (const [name, value] of Object.entries(received))
          if (!name.startsWith(":") && value !== undefined)
            responseHeaders[name] = Array.isArray(value) ? value.join(", ") : String(value)
      })
      stream.on("data", (part: Buffer) => parts.push(part))
      stream.on("end", () => {
        clearTimeout(timer)
        resolve({ status, headers: responseHeaders, body: Buffer.concat(parts) })
      })
      // A server that answers before it read the body may reset the stream: what came before the reset counts.
      stream.on("error", (error) => {
        clearTimeout(timer)
        if (status !== 0) resolve({ status, headers: responseHeaders, body: Buffer.concat(parts) })
        else reject(error)
      })
      if (request.chunks !== undefined) {
        for (const chunk of request.chunks) if (chunk.length > 0) stream.write(Buffer.from(chunk))
        stream.end()
      } else if (body !== undefined) {
        if (request.declaredLength === undefined) stream.end(body)
        else stream.write(body)
      }
    })
