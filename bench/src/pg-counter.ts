import { connect, createServer, type Socket } from "node:net"
import type { AddressInfo } from "node:net"

/**
 * A TCP proxy in front of PostgreSQL that counts what clients send, for the SQL rows' statements per request: every
 * simple Query ('Q') and every extended-protocol Execute ('E') is a statement; every Query and every Sync ('S') is a
 * round trip (the client then waits for ReadyForQuery). It reads the frontend protocol's framing only (a type byte and
 * a length), so it counts any driver the same. Used for a short probe, never during the measured runs.
 */
export interface StatementCounter {
  /** The database URL with its host and port replaced by the proxy's. */
  readonly url: string
  readonly counts: () => { readonly statements: number; readonly roundTrips: number }
  readonly close: () => Promise<void>
}

const SSL_REQUEST = 80877103

export const startStatementCounter = async (databaseUrl: string): Promise<StatementCounter> => {
  const target = new URL(databaseUrl)
  let statements = 0
  let roundTrips = 0
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname)
    sockets.add(client).add(upstream)
    let pending = Buffer.alloc(0)
    let started = false
    client.on("data", (chunk: Buffer) => {
      upstream.write(chunk)
      pending = Buffer.concat([pending, chunk])
      for (;;) {
        // Before the startup message, messages have no type byte: an SSLRequest (the server answers N), then startup.
        const header = started ? 5 : 4
        if (pending.length < header) break
        const length = started ? pending.readInt32BE(1) + 1 : pending.readInt32BE(0)
        if (pending.length < length) break
        if (!started) started = pending.readInt32BE(4) !== SSL_REQUEST
        else {
          const type = String.fromCharCode(pending[0] ?? 0)
          if (type === "Q" || type === "E") statements++
          if (type === "Q" || type === "S") roundTrips++
        }
        pending = pending.subarray(length)
      }
    })
    upstream.pipe(client)
    const end = (): void => {
      client.destroy()
      upstream.destroy()
      sockets.delete(client)
      sockets.delete(upstream)
    }
    client.on("close", end).on("error", end)
    upstream.on("close", end).on("error", end)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = new URL(databaseUrl)
  url.hostname = "127.0.0.1"
  url.port = String((server.address() as AddressInfo).port)
  return {
    url: url.href,
    counts: () => ({ statements, roundTrips }),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
