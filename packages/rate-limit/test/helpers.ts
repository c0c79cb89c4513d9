import { randomBytes } from "node:crypto"
import { connect, createServer, type Server, type Socket } from "node:net"

/** The servers the store tests run against; unset, or not answering, and those tests skip saying why. */
export const databaseUrl: string | undefined = process.env["DATABASE_URL"] || undefined
export const redisUrl: string | undefined = process.env["REDIS_URL"] || undefined

/** The same server at another address (a proxy, a black hole, a closed port): the URL with its host and port replaced. */
export const withAddress = (url: string, host: string, port: number): string => {
  const moved = new URL(url)
  moved.hostname = host
  moved.port = String(port)
  return moved.toString()
}

/** Whether something accepts TCP connections at the URL's host and port within a second. */
export const answers = (url: string | undefined, defaultPort: number): Promise<boolean> => {
  if (url === undefined) return Promise.resolve(false)
  const { hostname, port } = new URL(url)
  return new Promise((resolve) => {
    const socket = connect({ host: hostname || "127.0.0.1", port: Number(port || defaultPort) })
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once("connect", () => done(true)).once("error", () => done(false))
  })
}

/** Why a store suite skips: unset, or nothing answering at the address. */
export const skipReason = (variable: string, url: string | undefined, reachable: boolean): string | undefined =>
  url === undefined ? `skipped: ${variable} not set` : reachable ? undefined : `skipped: nothing answers at ${variable}`

/** A name no other test run uses, so test files can run in parallel and remove what they made. */
export const uniqueName = (prefix: string): string => `${prefix}_${randomBytes(6).toString("hex")}`

export interface Listening {
  readonly host: string
  readonly port: number
  readonly close: () => Promise<void>
}

const listen = async (server: Server, sockets: Set<Socket>, port = 0): Promise<Listening> => {
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("error", () => {}).once("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no TCP address")
  return {
    host: "127.0.0.1",
    port: address.port,
    close: () => {
      for (const socket of sockets) socket.destroy()
      return new Promise((resolve) => server.close(() => resolve()))
    }
  }
}

/** A store that accepts connections and never answers a byte: what a black-holed database looks like. */
export const startBlackHole = (): Promise<Listening> => {
  const sockets = new Set<Socket>()
  return listen(
    createServer(() => {}),
    sockets
  )
}

/**
 * A TCP proxy to `target`, on `port` (default: a free one), that can go silent: once `blackHole()` is called it
 * forwards nothing either way.
 */
export const startSwitchableProxy = async (
  target: string,
  defaultPort: number,
  listenPort = 0
): Promise<Listening & { readonly blackHole: () => void; readonly healNew: () => void }> => {
  const { hostname, port } = new URL(target)
  let silent = false
  /** Connections that stay silent for good once black-holed, as after a failover that left their address dead. */
  const dead = new Set<Socket>()
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect({ host: hostname, port: Number(port || defaultPort) })
    sockets.add(upstream)
    upstream.on("error", () => client.destroy()).once("close", () => sockets.delete(upstream))
    const mute = () => silent || dead.has(client)
    client.on("data", (chunk) => void (mute() || upstream.write(chunk)))
    upstream.on("data", (chunk) => void (mute() || client.write(chunk)))
    client.once("close", () => {
      dead.delete(client)
      upstream.destroy()
    })
  })
  const clients = new Set<Socket>()
  server.on("connection", (client) => {
    clients.add(client)
    client.once("close", () => clients.delete(client))
  })
  const listening = await listen(server, sockets, listenPort)
  return {
    ...listening,
    /** Stops forwarding either way, on every connection, open or new, without closing any. */
    blackHole: () => {
      silent = true
      for (const client of clients) dead.add(client)
    },
    /** New connections forward again; the ones open at the black hole stay silent. */
    healNew: () => void (silent = false)
  }
}

/** A port nothing listens on (one just freed): to start a client before its server. */
export const freePort = async (): Promise<number> => {
  const listening = await listen(createServer(), new Set())
  await listening.close()
  return listening.port
}
