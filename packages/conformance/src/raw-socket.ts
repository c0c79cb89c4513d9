import { connect, type Socket } from "node:net"
import { connect as connectTls } from "node:tls"
import type { RawResponse } from "./raw-http.js"

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

/**
 * Writes `bytes` on a fresh connection and collects everything the server sends until it closes the connection or
 * `quietMs` pass without data (then `closed` is false).
 */
export const exchange = (baseUrl: string, bytes: string | Uint8Array, quietMs = 250): Promise<Exchanged> =>
  new Promise((resolve) => {
    const socket = open(baseUrl)
    let wire = ""
    let timer = setTimeout(() => done(false), quietMs)
    const done = (closed: boolean): void => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ wire, closed })
    }
    socket.on("data", (data) => {
      wire += data.toString("latin1")
      clearTimeout(timer)
      timer = setTimeout(() => done(false), quietMs)
    })
    socket.on("error", () => undefined)
    socket.on("close", () => done(true))
    socket.write(bytes)
  })

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
