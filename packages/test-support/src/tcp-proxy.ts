import net from "node:net"

/**
 * A TCP proxy on 127.0.0.1 that a test can cut and restore, to play an outage of what is behind it (a database)
 * without touching it: `stop()` refuses new connections and drops every open one; `start()` listens again on the
 * same port, so clients configured with the proxy's address reconnect by themselves. `stall()` plays a database that
 * stops answering without closing anything, and `stall()` then `resume()` a failover.
 */
export interface TcpProxy {
  readonly port: number
  /** Stops accepting and destroys every proxied connection (both sides), like a server crash or a network cut. */
  readonly stop: () => Promise<void>
  /** Accepts connections again, on the same port. */
  readonly start: () => Promise<void>
  /**
   * Stops forwarding without closing anything: what either side sends on an open connection is never delivered, and
   * connections accepted from now on (until `resume()`) are accepted and never forwarded.
   */
  readonly stall: () => void
  /**
   * Forwards the connections accepted from now on again. Those open during the stall stay silent for good: the old
   * connections are dead, new ones work, as after a failover.
   */
  readonly resume: () => void
  /** Connections accepted so far, to tell that a client really reconnected. */
  readonly accepted: () => number
}

const listen = (server: net.Server, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, "127.0.0.1", () => {
      server.removeListener("error", reject)
      const address = server.address()
      if (address === null || typeof address === "string") reject(new Error("proxy has no TCP address"))
      else resolve(address.port)
    })
  })

export const startTcpProxy = async (target: { readonly host: string; readonly port: number }): Promise<TcpProxy> => {
  const open = new Set<net.Socket>()
  let accepted = 0
  const track = (socket: net.Socket) => {
    open.add(socket)
    socket.on("close", () => open.delete(socket))
    // A cut connection errors on both sides; that is the point, not a test failure.
    socket.on("error", () => socket.destroy())
  }
  let stalled = false
  /** What stall() silences: the open connections' two sides. */
  const forwarding = new Set<{ readonly client: net.Socket; readonly upstream: net.Socket }>()
  const silence = (socket: net.Socket) => {
    socket.unpipe()
    socket.pause()
  }
  const server = net.createServer((client) => {
    accepted++
    track(client)
    if (stalled) {
      // Accepted, never read nor forwarded: a handshake through it never completes.
      client.pause()
      return
    }
    const upstream = net.connect(target.port, target.host)
    track(upstream)
    const pair = { client, upstream }
    forwarding.add(pair)
    client.on("close", () => {
      forwarding.delete(pair)
      upstream.destroy()
    })
    upstream.on("close", () => client.destroy())
    client.pipe(upstream)
    upstream.pipe(client)
  })
  const port = await listen(server, 0)
  let listening = true
  return {
    port,
    accepted: () => accepted,
    stop: () =>
      new Promise((resolve) => {
        if (!listening) return resolve()
        listening = false
        server.close(() => resolve())
        for (const socket of open) socket.destroy()
      }),
    start: async () => {
      if (listening) return
      await listen(server, port)
      listening = true
    },
    stall: () => {
      stalled = true
      for (const { client, upstream } of forwarding) {
        silence(client)
        silence(upstream)
      }
      forwarding.clear()
    },
    resume: () => {
      stalled = false
    }
  }
}

/** `url` with its host and port replaced by the proxy's. */
export const viaProxy = (url: string, proxy: TcpProxy): string => {
  const proxied = new URL(url)
  proxied.hostname = "127.0.0.1"
  proxied.port = String(proxy.port)
  return proxied.toString()
}
