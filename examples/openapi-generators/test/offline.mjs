// Preloaded (`node --import`) into each generator the test runs: generating from the local document must need no
// network, so every connection and name lookup is refused, and reported on stderr, where the test looks for it (a
// generator that swallowed the error would otherwise pass unnoticed).
import dns from "node:dns"
import net from "node:net"
import process from "node:process"

export const REFUSED = "accord-offline: refused"

const refuse = (what) =>
  function refused() {
    process.stderr.write(`${REFUSED} ${what}\n`)
    throw new Error(`${REFUSED} ${what}: the generation runs offline`)
  }

// Every TCP or TLS connection (http, https, fetch's undici) goes through Socket#connect.
net.Socket.prototype.connect = refuse("a connection")
dns.lookup = refuse("a name lookup")
dns.resolve = refuse("a name lookup")
dns.promises.lookup = refuse("a name lookup")
dns.promises.resolve = refuse("a name lookup")
