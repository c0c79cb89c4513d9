import { request as httpRequest, type Agent } from "node:http"
import { request as httpsRequest } from "node:https"

/**
 * One HTTP/1.1 request with the bytes under the caller's control. `node:http` with `agent: false`: one connection
 * per request (`Connection: close`), so no request can see another's leftovers.
 *
 * Body modes, at most one of them:
 * - none of `body`, `chunks`: no body at all (neither Content-Length nor Transfer-Encoding is sent);
 * - `body`: exactly these bytes with `Content-Length` (a zero-length `body` sends `Content-Length: 0`);
 * - `chunks`: `Transfer-Encoding: chunked`, one chunk per entry;
 * - `body` with `declaredLength`: announces `Content-Length: declaredLength` (larger than `body`), sends `body` and
 *   never finishes the request, so only a server that answers without waiting for the rest gets a response.
 */
export interface RawRequest {
  readonly method: string
  /** Sent as is: already percent-encoded, may carry a query string. */
  readonly path: string
  /** Sent as given (names keep their case); `Host` and `Connection` are added by `node:http`. */
  readonly headers?: Readonly<Record<string, string>>
  readonly body?: string | Uint8Array
  readonly chunks?: ReadonlyArray<string | Uint8Array>
  readonly declaredLength?: number
  /** How long to wait for the complete response, default 5000 ms: a deadline from the start, not a quiet time. */
  readonly timeoutMs?: number
  /** Fails the request at once and closes its connection when aborted (an audit past its deadline). */
  readonly signal?: AbortSignal
}

export interface RawResponse {
  readonly status: number
  /** Lower-case names; a header sent more than once has its values joined by ", " (so duplicates show). */
  readonly headers: Readonly<Record<string, string>>
  readonly body: Buffer
}

/**
 * The most body bytes a response may have: the largest body an audit reads is swagger-ui's bundle (1.7 MB, in
 * ACC-docs-content-encoding), so 8 MiB leaves a margin of almost five. Past it the request fails; a target that streams
 * without end cannot make a runner hold more (docs/SECURITY.md, item 31).
 */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024

/** The failure of a response past `MAX_RESPONSE_BYTES`, the same words for every transport. */
export const tooLarge = (label: string): Error =>
  new Error(`${label}: the response is larger than ${MAX_RESPONSE_BYTES} bytes (8 MiB), not read further`)

const toBuffer = (data: string | Uint8Array): Buffer =>
  typeof data === "string" ? Buffer.from(data, "utf8") : Buffer.from(data)

const headersFromRaw = (raw: ReadonlyArray<string>): Record<string, string> => {
  const headers: Record<string, string> = {}
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = (raw[index] ?? "").toLowerCase()
    const value = raw[index + 1] ?? ""
    const previous = headers[name]
    headers[name] = previous === undefined ? value : `${previous}, ${value}`
  }
  return headers
}

/**
 * Sends `request` to `baseUrl` (`http://HOST:PORT`, or `https:`; a path in it is ignored, `request.path` is sent) and
 * resolves with the complete response. By default on a connection of its own; pass a keep-alive `agent` to reuse
 * connections (the fuzz sends thousands of requests). Rejects when the response is not complete within
 * `request.timeoutMs` or its body is larger than `MAX_RESPONSE_BYTES`, declared or as it arrives.
 */
export const send = (baseUrl: string, request: RawRequest, agent: Agent | false = false): Promise<RawResponse> => {
  const url = new URL(baseUrl)
  const timeoutMs = request.timeoutMs ?? 5000
  const label = `${request.method} ${request.path}`
  if (request.chunks !== undefined && request.body !== undefined) {
    return Promise.reject(new Error(`${label}: give either body or chunks`))
  }
  if (request.declaredLength !== undefined && request.body === undefined) {
    return Promise.reject(new Error(`${label}: declaredLength needs a body`))
  }
  const { signal } = request
  if (signal?.aborted === true) return Promise.reject(signal.reason)
  return new Promise<RawResponse>((resolve, reject) => {
    let settled = false
    const req = (url.protocol === "https:" ? httpsRequest : httpRequest)({
      host: url.hostname,
      port: url.port === "" ? undefined : url.port,
      method: request.method,
      path: request.path,
      agent
    })
    const finish = (outcome: { ok: RawResponse } | { error: Error }): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      signal?.removeEventListener("abort", abort)
      req.destroy()
      if ("ok" in outcome) resolve(outcome.ok)
      else reject(outcome.error)
    }
    const timer = setTimeout(
      () => finish({ error: new Error(`${label}: no complete response within ${timeoutMs} ms`) }),
      timeoutMs
    )
    const abort = (): void => finish({ error: signal?.reason instanceof Error ? signal.reason : new Error("aborted") })
    signal?.addEventListener("abort", abort, { once: true })
    req.on("response", (res) => {
      if (Number(res.headers["content-length"] ?? 0) > MAX_RESPONSE_BYTES) return finish({ error: tooLarge(label) })
      const parts: Array<Buffer> = []
      let received = 0
      res.on("data", (part: Buffer) => {
        received += part.length
        if (received > MAX_RESPONSE_BYTES) finish({ error: tooLarge(label) })
        else parts.push(part)
      })
      res.on("end", () =>
        finish({
          ok: { status: res.statusCode ?? 0, headers: headersFromRaw(res.rawHeaders), body: Buffer.concat(parts) }
        })
      )
      res.on("error", (error) => finish({ error }))
    })
    // A server may close the connection while we still write a body it refused; only an error before the complete
    // response fails the request (finish ignores anything after it settled).
    req.on("error", (error) => finish({ error: new Error(`${label}: ${error.message}`) }))

    for (const [name, value] of Object.entries(request.headers ?? {})) req.setHeader(name, value)

    if (request.chunks !== undefined) {
      req.setHeader("Transfer-Encoding", "chunked")
      for (const chunk of request.chunks) {
        const bytes = toBuffer(chunk)
        // A zero-length write would end the chunked stream early; empty entries mean nothing.
        if (bytes.length > 0) req.write(bytes)
      }
      req.end()
    } else if (request.body !== undefined) {
      const bytes = toBuffer(request.body)
      if (request.declaredLength !== undefined) {
        req.setHeader("Content-Length", String(request.declaredLength))
        req.flushHeaders()
        if (bytes.length > 0) req.write(bytes)
        // Deliberately not ended: the rest of the declared body never comes.
      } else {
        req.setHeader("Content-Length", String(bytes.length))
        req.end(bytes)
      }
    } else {
      req.removeHeader("Content-Length")
      req.removeHeader("Transfer-Encoding")
      req.end()
    }
  })
}

/** A client bound to one server. */
export type RawClient = (request: RawRequest) => Promise<RawResponse>

export const rawClient =
  (baseUrl: string): RawClient =>
  (request) =>
    send(baseUrl, request)
