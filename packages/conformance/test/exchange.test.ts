import { createServer, type Socket } from "node:net"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { exchange } from "@accord/conformance"

// `exchange(..., { endAtResponse: true })`, as the audits read one response per connection: it ends once the first
// final response is complete by its framing, without waiting for a server that keeps the connection open.

const sockets = new Set<Socket>()
/** A server that writes `answer` a few bytes at a time and never closes the connection. */
const server = createServer((socket) => {
  sockets.add(socket)
  socket.once("data", () => {
    const answer = currentAnswer
    let at = 0
    const next = (): void => {
      if (at >= answer.length || socket.destroyed) return
      socket.write(answer.slice(at, at + 3))
      at += 3
      setImmediate(next)
    }
    next()
  })
})
let currentAnswer = ""
const url = await new Promise<string>((resolve) =>
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    resolve(`http://127.0.0.1:${typeof address === "object" && address !== null ? address.port : 0}`)
  })
)
afterAll(async () => {
  for (const socket of sockets) socket.destroy()
  await new Promise((resolve) => server.close(resolve))
})

/** A quiet time no test waits for: only the response's own end may finish the exchange. */
const NEVER_QUIET = 60_000

const answered = async (answer: string) => {
  currentAnswer = answer
  return exchange(url, "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", NEVER_QUIET, {
    endAtResponse: true,
    deadlineMs: 30_000
  })
}

describe("exchange, ending at the first complete response", () => {
  it("reads a Content-Length body to its last byte, trickled, from a server that does not close", async () => {
    const answer = 'HTTP/1.1 200 OK\r\nContent-Length: 15\r\n\r\n{"status":"ok"}'
    expect(await answered(answer)).toEqual({ wire: answer, closed: false })
  })

  it("skips a 100 Continue, reads a chunked body to its last chunk, and ends a 204 at its head", async () => {
    const chunked =
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
    expect(await answered(chunked)).toEqual({ wire: chunked, closed: false })
    const noContent = "HTTP/1.1 204 No Content\r\nAllow: GET\r\n\r\n"
    expect(await answered(noContent)).toEqual({ wire: noContent, closed: false })
  })
})
