import { MAX_RESPONSE_BYTES, tooLarge, type RawRequest, type RawResponse } from "./raw-http.js"

/**
 * Any fetch: the runtime's `fetch`, a test environment's, or a fetch handler called in process
 * (`@accord/adapter-fetch`'s `makeFetchHandler`), so that the audits run where there is no socket.
 */
export type Fetch = (request: Request) => Promise<Response>

/**
 * What `request` asks for that a fetch cannot express (its framing is the runtime's), or undefined: the audits that
 * send such requests declare the `raw-http` need, which a target built on a fetch does not meet.
 */
const inexpressible = (request: RawRequest): string | undefined => {
  if (request.chunks !== undefined) return "chunk boundaries"
  if (request.declaredLength !== undefined) return "a declared length never sent"
  if (request.body !== undefined && (request.method === "GET" || request.method === "HEAD"))
    return `a body on ${request.method}`
  return undefined
}

/** The body's bytes, at most `MAX_RESPONSE_BYTES` of them however the answer streams (docs/SECURITY.md, item 31). */
const boundedBody = async (response: Response, label: string): Promise<Buffer> => {
  if (response.body === null) return Buffer.alloc(0)
  const reader = response.body.getReader()
  const parts: Array<Uint8Array> = []
  let received = 0
  try {
    for (let part = await reader.read(); !part.done; part = await reader.read()) {
      received += part.value.byteLength
      if (received > MAX_RESPONSE_BYTES) throw tooLarge(label)
      parts.push(part.value)
    }
  } finally {
    reader.cancel().catch(() => undefined)
  }
  return Buffer.concat(parts)
}

/**
 * `RawRequest` through `fetch`, against `baseUrl`'s origin: the same deadline (`timeoutMs`, default 5000 ms, from the
 * start to the end of the body), body bound (`MAX_RESPONSE_BYTES`) and `signal` as `send`, whether or not the fetch
 * honours the signal (a handler in process may not). A body goes as bytes with its Content-Length, as `send` sends
 * it (a string body would get a Content-Type the audit did not ask for); redirects are not followed. A request a fetch
 * cannot express (see `inexpressible`) fails at once with the reason, rather than being sent as something else.
 */
export const fetchSend =
  (baseUrl: string, fetch: Fetch) =>
  async (request: RawRequest): Promise<RawResponse> => {
    const label = `${request.method} ${request.path}`
    const unsendable = inexpressible(request)
    if (unsendable !== undefined) throw new Error(`${label}: a fetch cannot send ${unsendable} (the raw-http need)`)
    request.signal?.throwIfAborted()
    const timeoutMs = request.timeoutMs ?? 5000
    const controller = new AbortController()
    const timedOut = new Error(`${label}: no complete response within ${timeoutMs} ms`)
    const abort = (): void =>
      controller.abort(request.signal?.reason instanceof Error ? request.signal.reason : new Error("aborted"))
    request.signal?.addEventListener("abort", abort, { once: true })
    let timer: ReturnType<typeof setTimeout> | undefined
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort(timedOut)
        reject(timedOut)
      }, timeoutMs)
      controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true })
    })
    try {
      const headers = new Headers(Object.entries(request.headers ?? {}))
      const body = request.body === undefined ? undefined : Uint8Array.from(Buffer.from(request.body))
      if (body !== undefined) headers.set("content-length", String(body.byteLength))
      const exchange = async (): Promise<RawResponse> => {
        const response = await fetch(
          new Request(`${new URL(baseUrl).origin}${request.path}`, {
            method: request.method,
            headers,
            redirect: "manual",
            signal: controller.signal,
            ...(body === undefined ? {} : { body })
          })
        )
        const responseHeaders: Record<string, string> = {}
        response.headers.forEach((value, name) => (responseHeaders[name] = value))
        return { status: response.status, headers: responseHeaders, body: await boundedBody(response, label) }
      }
      return await Promise.race([exchange(), deadline])
    } catch (error) {
      throw error instanceof Error && error.message.startsWith(label)
        ? error
        : new Error(`${label}: ${error instanceof Error ? error.message : String(error)}`)
    } finally {
      clearTimeout(timer)
      request.signal?.removeEventListener("abort", abort)
      controller.abort()
    }
  }
