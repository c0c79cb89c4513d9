import { connect, type Socket } from "node:net"
import { connect as connectTls } from "node:tls"
import { MAX_RESPONSE_BYTES, tooLarge, type RawResponse } from "./raw-http.js"

/** What `exchange` saw: every byte the server sent (latin1), and whether the server closed the connection. */
export interface Exchanged {
  readonly wire: string
  readonly closed: boolean
}

/** A connection to `baseUrl`'s host and port, over TLS for `https:` (the audits may run against a deployment). */
const open = (baseUrl: string): Socket => {
  const url = new URL(baseUrl)
  const tls = url.protocol === "https:"
  const port = url.port === "" ? (tls ? 443 : 80) : Number(url.port)
  return tls ? connectTls({ host: url.hostname, port, servername: url.hostname }) : connect(port, url.hostname)
}

/** How long `exchange` waits for more from a server that neither closes nor sends. */
export const DEFAULT_QUIET_MS = 5000

/** What bounds an exchange besides its quiet time. */
export interface ExchangeLimits {
  /** When the exchange fails if the server neither closed nor went quiet, default 10,000 ms from the start. */
  readonly deadlineMs?: number
  /** Fails the exchange at once and closes its connection when aborted (an audit past its deadline). */
  readonly signal?: AbortSignal
  /**
   * Ends the exchange (`closed` false) as soon as the first final response is complete, as its framing declares
   * (Content-Length, chunked, or none for 204 and 304), rather than when the server closes or goes quiet: a server
   * that keeps the connection open after `Connection: close` (workerd's local server does) costs no quiet time.
   */
  readonly endAtResponse?: boolean
}

/**
 * As bytes arrive (the whole text so far each time), whether the first final response is complete. Incremental: each
 * call looks only at what is new, so a response trickled a byte at a time costs linear work, never a rescan.
 */
const firstResponseComplete = (): ((wire: string) => boolean) => {
  let headFrom = 0
  let searchedTo = 0
  let bodyStart = -1
  let framing: { readonly length: number } | "chunked" | "close" = "close"
  return (wire) => {
    while (bodyStart < 0) {
      const end = wire.indexOf("\r\n\r\n", Math.max(headFrom, searchedTo - 3))
      searchedTo = wire.length
      if (end < 0) return false
      const head = parseWire(wire.slice(headFrom, end + 4))
      if (head === undefined) return false
      if (head.status >= 100 && head.status < 200) {
        // An interim answer (100 Continue): the final one follows.
        headFrom = end + 4
        continue
      }
      bodyStart = end + 4
      const length = Number(head.headers["content-length"] ?? Number.NaN)
      framing =
        head.status === 204 || head.status === 304
          ? { length: 0 }
          : /\bchunked\b/i.test(head.headers["transfer-encoding"] ?? "")
            ? "chunked"
            : Number.isSafeInteger(length) && length >= 0
              ? { length }
              : "close"
      searchedTo = bodyStart
    }
    if (framing === "close") return false
    if (framing !== "chunked") return wire.length - bodyStart >= framing.length
    const last = wire.indexOf("\r\n0\r\n\r\n", Math.max(bodyStart - 2, searchedTo - 6))
    searchedTo = wire.length
    return last >= 0 || wire.startsWith("0\r\n\r\n", bodyStart)
  }
}

/**
 * Writes `bytes` on a fresh connection and collects everything the server sends until it closes the connection or
 * `quietMs` pass without data (then `closed` is false). The quiet time only ends an exchange with a server that keeps
 * the connection open: its default is long, so that a busy server is never taken for a finished one; a caller that
 * wants a quick end sends `Connection: close`. Rejects when the server still sends at `deadlineMs` (a
 * trickle re-arms the quiet time forever) or has sent more than `MAX_RESPONSE_BYTES` (docs/SECURITY.md, items 31, 32).
 */
export const exchange = (
  baseUrl: string,
  bytes: string | Uint8Array,
  quietMs = DEFAULT_QUIET_MS,
  { deadlineMs = 10_000, signal, endAtResponse = false }: ExchangeLimits = {}
): Promise<Exchanged> => {
  if (signal?.aborted === true) return Promise.reject(signal.reason)
  return new Promise((resolve, reject) => {
    const socket = open(baseUrl)
    let wire = ""
    let settled = false
    const finish = (outcome: { ok: Exchanged } | { error: unknown }): void => {
      if (settled) return
      settled = true
      clearTimeout(quiet)
      clearTimeout(deadline)
      signal?.removeEventListener("abort", abort)
      socket.destroy()
      if ("ok" in outcome) resolve(outcome.ok)
      else reject(outcome.error)
    }
    const done = (closed: boolean): void => finish({ ok: { wire, closed } })
    const abort = (): void => finish({ error: signal?.reason })
    let quiet = setTimeout(() => done(false), quietMs)
    const deadline = setTimeout(
      () =>
        finish({ error: new Error(`the server still sent after ${deadlineMs} ms, without closing the connection`) }),
      deadlineMs
    )
    signal?.addEventListener("abort", abort, { once: true })
    const complete = endAtResponse ? firstResponseComplete() : () => false
    socket.on("data", (data: Buffer) => {
      if (wire.length + data.length > MAX_RESPONSE_BYTES) return finish({ error: tooLarge("the raw exchange") })
      wire += data.toString("latin1")
      if (complete(wire)) return done(false)
      clearTimeout(quiet)
      quiet = setTimeout(() => done(false), quietMs)
    })
    socket.on("error", () => undefined)
    socket.on("close", () => done(true))
    socket.write(bytes)
  })
}

/**
 * The first response of what `exchange` saw, as `send` would have given it (a header sent more than once has its
 * values joined by ", "), or undefined when it holds no complete HTTP/1.1 head.
 */
export const parseWire = (wire: string): RawResponse | undefined => {
  const end = wire.indexOf("\r\n\r\n")
  const status = /^HTTP\/1\.1 (\d{3}) /.exec(wire)
  if (end < 0 || status === null) return undefined
  const headers: Record<string, string> = {}
  for (const line of wire.slice(0, end).split("\r\n").slice(1)) {
    const colon = line.indexOf(":")
    const name = line.slice(0, colon).toLowerCase()
    const value = line.slice(colon + 1).trim()
    const previous = headers[name]
    headers[name] = previous === undefined ? value : `${previous}, ${value}`
  }
  return { status: Number(status[1]), headers, body: Buffer.from(wire.slice(end + 4), "latin1") }
}

/** True when a new connection to `baseUrl` is refused (nothing listens any more). */
export const refusesConnections = (baseUrl: string): Promise<boolean> =>
  new Promise((resolve) => {
    const url = new URL(baseUrl)
    const socket = connect(Number(url.port), url.hostname)
    socket.once("connect", () => {
      socket.destroy()
      resolve(false)
    })
    socket.once("error", () => resolve(true))
  })
